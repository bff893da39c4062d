package initproc

import (
	"bytes"
	"fmt"
	"os"
	"strings"
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
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return fmt.Errorf("read the forking thread's status: %w", err)
	}
	id := func(v int) string { return fmt.Sprintf("%d\t%d\t%d\t%d", v, v, v, v) }
	want := map[string]string{
		"Uid": id(uid), "Gid": id(gid), "Groups": "",
		"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1",
	}
	if seccomp {
		want["Seccomp"] = "2"
	}
	got := map[string]string{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := strings.Cut(string(line), ":")
		if ok {
			got[k] = strings.TrimSpace(v)
		}
	}
	for k, w := range want {
		if got[k] != w {
			return fmt.Errorf("bug: the thread forking the target has %s %q, want %q: it is not confined as planned", k, got[k], w)
		}
	}
	return nil
}
