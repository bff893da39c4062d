//go:build linux && cgo

package landlock

// psxListsTasks: with cgo, go-landlock's all-threads system calls go
// through libpsx, which lists /proc/<pid>/task from the thread it has
// already restricted (go-landlock issue 39): Restrict grants that listing.
const psxListsTasks = true
