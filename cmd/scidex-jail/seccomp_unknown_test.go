package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
)

// unknownSyscallScript makes, from inside a run, the calls newer than the
// old deny-list knew and numbers no kernel has, and prints each outcome as
// "name=ok" or "name=ERRNONAME". open_tree_attr is given what makes the
// kernel return a descriptor (no OPEN_TREE_CLONE, so no capability is
// needed): without the filter it succeeds.
const unknownSyscallScript = `
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, *args):
    r = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r >= 0:
        if name == "open_tree_attr":
            os.close(r)
        print(name + "=ok")
    else:
        print(name + "=" + errno.errorcode[ctypes.get_errno()])
call("open_tree_attr", int(sys.argv[1]), -100, b"/", os.O_CLOEXEC, None, 0)
call("gap", int(sys.argv[2]))
call("above", 1000)
call("getpid", int(sys.argv[3]))
`

// TestSeccompUnknownSyscalls: inside a run, open_tree_attr (Linux 6.15,
// newer than the old deny-list) is refused with the mount API's EPERM, and
// numbers the table does not name (a gap, one above the highest) get
// ENOSYS; the same run with the filter off shows open_tree_attr succeeds
// there, so the filter is what answers. Ordinary analyses still run: the
// scientific stack imports and a shell pipeline works.
func TestSeccompUnknownSyscalls(t *testing.T) {
	requireRoot(t)
	const gap = 400 // unassigned on amd64 (337-423) and arm64 (295-423)
	py := []string{"/usr/bin/python3", "-c", unknownSyscallScript,
		fmt.Sprint(unix.SYS_OPEN_TREE_ATTR), fmt.Sprint(gap), fmt.Sprint(unix.SYS_GETPID)}
	tests := []struct {
		name  string
		flags []string
		want  string
	}{
		{"filtered", nil, "open_tree_attr=EPERM\ngap=ENOSYS\nabove=ENOSYS\ngetpid=ok\n"},
		{"filter off", []string{"--unsafe-disable", "seccomp"}, "open_tree_attr=ok\ngap=ENOSYS\nabove=ENOSYS\ngetpid=ok\n"},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			args := append([]string{"run", "--id", "unknown-syscalls", "--tmp-root", tmpRoot(t)}, tt.flags...)
			r := runJail(t, runOpts{}, append(append(args, "--"), py...)...)
			wantStatus(t, r, report.StatusOK, 0)
			if r.stdout != tt.want {
				t.Errorf("%s: the calls printed %q, want %q; %v", tt.name, r.stdout, tt.want, r)
			}
		})
	}
	t.Run("report", func(t *testing.T) {
		r := runJail(t, runOpts{}, "run", "--id", "unknown-report", "--tmp-root", tmpRoot(t), "--", "/bin/true")
		wantStatus(t, r, report.StatusOK, 0)
		s := r.report.Enforced.Seccomp
		const line = "system calls the table does not name (unassigned numbers, and any newer than it): ENOSYS"
		if s == nil || !slices.Contains(s.Denied, line) {
			t.Errorf("report's seccomp = %+v, want denied to hold %q", s, line)
		}
	})
}

// TestSeccompOrdinaryAnalyses: what analyses do still works under the
// filter that denies unknown numbers: Python's scientific and standard
// modules (numpy when installed), a process pool, and a shell pipeline.
func TestSeccompOrdinaryAnalyses(t *testing.T) {
	requireRoot(t)
	modules := "json, sqlite3, csv, multiprocessing, subprocess, hashlib, ssl, decimal, zlib"
	// numpy when the host's Python has it (.ci/deps installs it; a
	// machine without it still runs the rest).
	if exec.Command("/usr/bin/python3", "-c", "import numpy").Run() == nil {
		modules += ", numpy"
	}
	script := "import " + modules + `
with multiprocessing.Pool(2) as p:
    assert p.map(abs, [-1, -2]) == [1, 2]
subprocess.run(["/bin/true"], check=True)
if "numpy" in globals():  # OpenBLAS's threads at work
    m = numpy.random.default_rng(1).random((300, 300))
    assert numpy.allclose(m @ numpy.linalg.inv(m), numpy.eye(300))
print("python ok")`
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"python " + modules, []string{"/usr/bin/python3", "-c", script}, "python ok\n"},
		{"sh pipeline", []string{"/bin/sh", "-c", "seq 1 2000 | sort -rn | head -n 3 | tr '\\n' ' ' | wc -w"}, "3\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Fields(tt.name)[0], func(t *testing.T) {
			args := append([]string{"run", "--id", "ordinary", "--tmp-root", tmpRoot(t), "--"}, tt.argv...)
			r := runJail(t, runOpts{}, args...)
			wantStatus(t, r, report.StatusOK, 0)
			if r.stdout != tt.want {
				t.Errorf("%s printed %q, want %q; %v", tt.name, r.stdout, tt.want, r)
			}
		})
	}
}
