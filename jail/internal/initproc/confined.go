package initproc

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// confined checks, right before the fork, that the thread about to fork
// the target holds exactly the identity the setup gave it, as the kernel
// sees it: uid and gid uid/gid (real, effective, saved, filesystem), every
// capability set empty, no_new_privs, and seccomp filtering when a filter
// was loaded. The setup applies these to this thread only (the raw system
// calls, without the all-threads machinery); the target inherits this
// thread's state and nothing of the init's other threads, which run only
// the Go runtime and the init's own goroutines. A thread that is not as
// planned fails the run closed, stage "exec".
func confined(uid, gid int, seccomp bool) error {
	b, err := sysfile.Read("/proc/thread-self/status")
	if err != nil {
		return fmt.Errorf("read the forking thread's status: %w", err)
	}
	return checkStatus(b, uid, gid, seccomp)
}

// checkStatus checks the lines of a /proc/<tid>/status (see confined). A
// line that is missing counts as empty.
func checkStatus(status []byte, uid, gid int, seccomp bool) error {
	const none = "0000000000000000"
	ids := func(v int) string {
		s := strconv.Itoa(v)
		return s + "\t" + s + "\t" + s + "\t" + s
	}
	want := []struct{ key, val string }{
		{"Uid", ids(uid)}, {"Gid", ids(gid)}, {"Groups", ""},
		{"CapInh", none}, {"CapPrm", none}, {"CapEff", none}, {"CapBnd", none}, {"CapAmb", none},
		{"NoNewPrivs", "1"},
	}
	if seccomp {
		want = append(want, struct{ key, val string }{"Seccomp", "2"})
	}
	got := make([][]byte, len(want))
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		for i, w := range want {
			if string(k) == w.key {
				got[i] = bytes.TrimSpace(v)
			}
		}
	}
	for i, w := range want {
		if string(got[i]) != w.val {
			return fmt.Errorf("bug: the thread forking the target has %s %q, want %q: it is not confined as planned", w.key, got[i], w.val)
		}
	}
	return nil
}
