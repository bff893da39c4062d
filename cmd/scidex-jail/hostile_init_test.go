package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
)

// signalsInit ignores every catchable signal itself (the forwarded ones come
// back to it), leaves an output, then sends PID 1, and each of its threads,
// every signal 1-64 and tries to set PID 1's (and each thread's) open-file
// and CPU limits, which must fail with EPERM.
const signalsInit = `import ctypes, errno, os, platform, resource, signal, sys
for s in range(1, 65):
    try:
        signal.signal(s, signal.SIG_IGN)
    except (OSError, ValueError):
        pass
open("result.csv", "w").write("x")
libc = ctypes.CDLL(None, use_errno=True)
tgkill = {"x86_64": 234, "aarch64": 131}[platform.machine()]
tids = [int(t) for t in os.listdir("/proc/1/task")]
for s in range(1, 65):
    os.kill(1, s)
    for t in tids:
        libc.syscall(tgkill, 1, t, s)
bad = []
for pid in [1] + tids:
    for res, lim in [(resource.RLIMIT_NOFILE, (0, 0)), (resource.RLIMIT_CPU, (1, 1))]:
        try:
            resource.prlimit(pid, res, lim)
            bad.append("prlimit(%d, %d, %r) succeeded" % (pid, res, lim))
        except PermissionError:
            pass
        except OSError as e:
            bad.append("prlimit(%d, %d, %r): %s, want EPERM" % (pid, res, lim, e))
resource.prlimit(1, resource.RLIMIT_NOFILE)  # a read stays allowed
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))  # and so do one's own
if bad:
    sys.exit("\n".join(bad))
print("sent", len(tids), "threads")
`

// TestSignalsToInit: nothing the analysis sends its init (every signal, to
// PID 1 and to each of its threads, and new limits) crashes it or changes
// its limits: the run ends as the analysis did, ok, its output listed, no
// Go traceback of the init on its stderr. The second case is issue 32's
// reproduction, SIGABRT.
func TestSignalsToInit(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name, script string
	}{
		{"every signal and prlimit", signalsInit},
		{"abort", `import os, time; open("result.csv", "w").write("x"); os.kill(1, 6); time.sleep(1)`},
	}
	for _, m := range modes {
		for _, c := range cases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				h := runHostile(t, m.rootless, false, nil, c.script)
				wantStatus(t, h.result, report.StatusOK, 0)
				if _, ok := h.output("result.csv"); !ok {
					t.Errorf("outputs = %v, want result.csv listed", h.paths())
				}
				for _, s := range []string{"goroutine ", "SIGABRT", "PC=", "signal arrived"} {
					if strings.Contains(h.stderr, s) {
						t.Errorf("stderr holds %q, want no traceback of the init:\n%s", s, h.stderr)
					}
				}
			})
		}
	}
}

// TestSignalsToServedInit: the same from a served run, whose init was a
// slot started ahead (its signals shut out before it waited for the run):
// the client gets an ok run with its output, and no traceback on the
// stderr it handed the server.
func TestSignalsToServedInit(t *testing.T) {
	requireRoot(t)
	sock := filepath.Join(tmpRoot(t), "s.sock")
	srv := exec.Command(jailBin, "serve", "--socket", sock, "--slots", "1")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() })
	waitFor(t, func() bool { _, err := os.Stat(sock); return err == nil }, "the socket "+sock)
	// The slot is made beside the server's start: a run may start cold
	// meanwhile, and a later one takes it.
	slot := false
	for i := 0; i < 10 && !slot; i++ {
		r := runJail(t, runOpts{}, "run", "--server", sock, "--id", runID(t, "sigserved"), "--tmp-root", tmpRoot(t),
			"--", "/usr/bin/python3", "-c", signalsInit)
		wantStatus(t, r, report.StatusOK, 0)
		if len(r.report.Outputs) != 1 || r.report.Outputs[0].Path != "result.csv" {
			t.Errorf("outputs = %+v, want result.csv", r.report.Outputs)
		}
		if strings.Contains(r.stderr, "goroutine ") {
			t.Errorf("stderr holds a Go traceback:\n%s", r.stderr)
		}
		slot = r.report.Start == "slot"
		time.Sleep(200 * time.Millisecond)
	}
	if !slot {
		t.Errorf("no run of 10 took a slot")
	}
}

// TestSigtermToInitAtOnce: a target that sends PID 1 SIGTERM the moment it
// starts finds it already forwarding: the signal comes back to the target
// (whose shell traps it, leaves its output and exits 0), never the Go
// runtime's exit of the init, nor lost. A shell is fast enough to beat a
// registration made after the fork (4 runs in 20 died of it), so the test
// runs 20; a lost signal would leave the shell waiting 10 s, then exit 3.
func TestSigtermToInitAtOnce(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	for i := range 20 {
		r := runJail(t, runOpts{}, "run", "--id", fmt.Sprintf("%s-%d", runID(t, "term"), i), "--tmp-root", root,
			"--", "/bin/sh", "-c", "trap 'echo x > result.csv; exit 0' TERM; sleep 10 & kill -TERM 1; wait; exit 3")
		wantStatus(t, r, report.StatusOK, 0)
		if len(r.report.Outputs) != 1 || r.report.Outputs[0].Path != "result.csv" {
			t.Errorf("outputs = %+v, want result.csv", r.report.Outputs)
		}
	}
}
