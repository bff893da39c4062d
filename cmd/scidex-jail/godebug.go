// The Go runtime (1.25 and later) re-reads the cgroup's CPU quota in the
// background for the life of the process, to update GOMAXPROCS; the jail's
// processes need none of that (the supervisor sets one P as main starts,
// the init runs with GOMAXPROCS=1 inside the run's own quota). The quota
// is still read once at start: Go 1.26 does that whatever any setting
// says.
//go:debug updatemaxprocs=0

package main
