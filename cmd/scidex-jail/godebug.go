// The Go runtime's cgroup-aware GOMAXPROCS (Go 1.25) re-reads the CPU
// quota in the background for the life of the process; the jail's
// processes need none of it (the supervisor mostly waits, the init runs
// with GOMAXPROCS=1 inside the run's own quota). The runtime still reads
// /proc/self/cgroup and mountinfo once at start: Go 1.26 does that
// unconditionally (for a metric), whatever these settings say.
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

package main
