package deploy

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// The VM tests: they need a pure cgroup v2 hierarchy and run in the VM
// harness (.ci/vmtests, stage "deploy"), which sets SCIDEX_REQUIRE_CGROUP2=1
// so that they fail there rather than skip. On a hybrid host they skip,
// naming what the probe found.

// cgroup2Root is the mount point of the whole cgroup v2 hierarchy with the
// memory, cpu and pids controllers, or a skip.
func cgroup2Root(t *testing.T) string {
	t.Helper()
	requireRoot(t)
	mounts, err := testutil.ReadMounts()
	if err != nil {
		t.Fatal(err)
	}
	mount := testutil.Cgroup2Mount(mounts)
	found := "no cgroup2 mount of the whole hierarchy"
	if mount != "" {
		b, _ := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
		ctl := strings.Fields(string(b))
		if slices.Contains(ctl, "memory") && slices.Contains(ctl, "cpu") && slices.Contains(ctl, "pids") {
			return mount
		}
		found = "cgroup2 at " + mount + " with controllers " + strings.TrimSpace(string(b)) + " (memory, cpu or pids is on cgroup v1: a hybrid host)"
	}
	if testutil.Cgroup2Required() {
		t.Fatalf("%s=1 but found %s: the VM harness should boot a pure cgroup v2 kernel", testutil.RequireCgroup2Env, found)
	}
	t.Skipf("needs the memory, cpu and pids controllers on cgroup v2; found %s: runs in the VM harness (.ci/vmtests)", found)
	return ""
}

// delegate makes dir a cgroup delegated to uid the way systemd's
// Delegate=yes does: the directory and its cgroup.procs,
// cgroup.subtree_control and cgroup.threads belong to uid. Removed at
// cleanup, children first.
func delegate(t *testing.T, dir string, uid int) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroupTree(t, dir) })
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
		if err := os.Chown(filepath.Join(dir, f), uid, uid); err != nil {
			t.Fatal(err)
		}
	}
}

// removeCgroupTree removes a cgroup and its children, deepest first.
func removeCgroupTree(t *testing.T, dir string) {
	t.Helper()
	var dirs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
			t.Errorf("remove cgroup %s: %v", dirs[i], err)
		}
	}
}

// cgroupDirs lists every cgroup below root.
func cgroupDirs(root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != root {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// asUserIn runs a shell script as uid:uid, born in the cgroup dir (as
// systemd starts a service's main process), with dir's cgroup as its own.
func asUserIn(t *testing.T, uid int, cgroup, script string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	fd, err := unix.Open(cgroup, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/"}, env...)
	cmd.Dir = "/"
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}},
		UseCgroupFD: true, CgroupFD: fd,
		Pdeathsig: syscall.SIGKILL,
	}
	err = cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("run as uid %d: %v", uid, err)
	}
	return out.String(), errb.String(), code
}

// delegateHelper is packaging/delegate: from the checkout, or in the VM
// harness, where the checkout may not be visible, the copy .ci/vmtests
// hands in with SCIDEX_DELEGATE.
func delegateHelper(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SCIDEX_DELEGATE"); p != "" {
		return p
	}
	return filepath.Join(repoRoot, "packaging", "delegate")
}

// pythonPackage is python/scidex_jail: from the checkout, or in the VM
// harness, where the checkout may not be visible (a clone under /tmp is
// not: the VM's /tmp is its own), the copy .ci/vmtests hands in with
// SCIDEX_PYTHON_PKG.
func pythonPackage() string {
	if p := os.Getenv("SCIDEX_PYTHON_PKG"); p != "" {
		return p
	}
	return filepath.Join(repoRoot, "python", "scidex_jail")
}

// copyExecutable copies src into dir (mode 0755) and returns the copy.
func copyExecutable(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// checkLines parses `scidex-jail check` output into name -> state and text.
func checkLines(out string) map[string][2]string {
	got := map[string][2]string{}
	for _, l := range strings.Split(out, "\n") {
		for _, st := range []string{"OK", "MISSING", "DEGRADED"} {
			if rest, ok := strings.CutPrefix(l, st+" "); ok {
				name, text, _ := strings.Cut(strings.TrimLeft(rest, " "), ": ")
				got[name] = [2]string{st, text}
			}
		}
	}
	return got
}
