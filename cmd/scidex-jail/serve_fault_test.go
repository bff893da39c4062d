package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeFaultInjection kills a server with SIGKILL, and stops it with
// SIGTERM, at seeded random moments of its first 60 ms, while it makes
// its slots and a run starts (slots in every state: a leaf made, an init
// starting, ready, taken by the run, being destroyed). After each: no
// process of ours is left; a SIGTERM gives the run a cancelled report (or
// refuses it, if it came too late) and the server exits 0; gc leaves the
// tmp-root empty. Leaves are checked once, after the last trial (gc takes
// them 2 s after they were made).
func TestServeFaultInjection(t *testing.T) {
	seed, rng := faultRand(27)
	const trials = 12
	root := tmpRoot(t)
	var servers slotLeaves
	prefix := fmt.Sprintf("sfault%d", os.Getpid())
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		for i := 0; i < trials; i++ {
			delay := time.Duration(rng.Int63n(int64(60 * time.Millisecond)))
			id := fmt.Sprintf("%s-%d-%d", prefix, sig, i)
			what := fmt.Sprintf("seed %d, %s after %s (trial %s)", seed, jailSigName(sig), delay, id)
			c := startServe(t, "--slots", "2")
			servers = append(servers, c.slots()...)
			m := marker(t)
			c.send(runReq("r", request.Request{ID: id, Cwd: root, TmpRoot: root},
				"/bin/sh", "-c", "echo x > out.txt; sleep "+m))
			time.Sleep(delay)
			c.cmd.Process.Signal(sig)
			if sig == syscall.SIGTERM {
				r := c.next()
				if r.Event == "accepted" {
					r = c.await("r")
				}
				switch {
				case r.Event == "done" && r.report(t).Status != report.StatusCancelled:
					t.Errorf("%s: the run ended %s, want cancelled", what, r.report(t).Status)
				case r.failed() && r.ExitCode != nil && *r.ExitCode != 125:
					t.Errorf("%s: error reply %+v, want exit_code 125", what, r)
				}
			}
			err := c.cmd.Wait()
			if sig == syscall.SIGTERM && err != nil {
				t.Errorf("%s: server exit: %v, want 0", what, err)
			}
			waitGone(t, m, 5*time.Second)
			waitNoJail(t, what)
			gc(t, "--tmp-root", root)
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("%s: after gc the tmp-root holds %v, want nothing", what, got)
			}
		}
	}
	time.Sleep(2500 * time.Millisecond)
	gc(t, "--tmp-root", root)
	if left := servers.added(t); len(left) != 0 {
		t.Errorf("slot leaves left after gc: %v", left)
	}
	if left := leavesOf(t, prefix); len(left) != 0 {
		t.Errorf("run leaves left after gc: %v", left)
	}
}
