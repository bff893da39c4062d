package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestRootlessRun runs the jail as an unprivileged user: namespaces, the
// mount view, Landlock, seccomp and the tmpfs disk budget all work without
// root. There is no delegated cgroup for that user here, so the cgroup layer
// is off by name (and the report says so).
func TestRootlessRun(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	if err := os.Chmod(root, 0o1777); err != nil {
		t.Fatal(err)
	}
	rep := root + "/report.json"
	script := `id -u; echo small > small.txt
python3 -c "
import errno
try:
    with open('big', 'wb') as f:
        while True:
            f.write(b'x' * 65536)
except OSError as e:
    print('errno', e.errno)
    raise SystemExit(1)
"`
	cmd := exec.Command(jailBin, "run", "--id", "rootless", "--tmp-root", root, "--report", rep,
		"--disk", "1M", "--unsafe-disable", "cgroup", "--", "/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cmd.Output()
	r := finishJail(t, cmd, nil, rep, nil, nil)
	r.code = cmd.ProcessState.ExitCode()
	r.stdout = string(out)
	wantStatus(t, r, report.StatusDiskLimit, 1)
	if !strings.Contains(r.stdout, "1000\n") || !strings.Contains(r.stdout, "errno 28") {
		t.Errorf("stdout = %q, want uid 1000 inside and ENOSPC (28) at the budget", r.stdout)
	}
	if e := r.report.Enforced; e.HostUID != 65534 || e.Landlock == nil || e.Seccomp == nil {
		t.Errorf("enforced = %+v, want host uid 65534 with Landlock and seccomp", e)
	}
	if d := strings.Join(r.report.Enforced.Degraded, ";"); !strings.Contains(d, "cgroup") {
		t.Errorf("degraded = %q, want the disabled cgroup layer named", d)
	}
	found := false
	for _, o := range r.report.Outputs {
		found = found || (o.Path == "small.txt" && o.Size == 6)
	}
	if !found {
		t.Errorf("outputs = %+v, want small.txt (6 bytes) listed", r.report.Outputs)
	}
	if got := entries(t, root); len(got) != 1 { // the report
		t.Errorf("tmp-root after the run holds %v, want only the report", got)
	}
}
