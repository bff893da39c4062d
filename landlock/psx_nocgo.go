//go:build linux && !cgo

package landlock

// psxListsTasks: without cgo, the all-threads system calls are the Go
// runtime's AllThreadsSyscall, which reads nothing after the call.
const psxListsTasks = false
