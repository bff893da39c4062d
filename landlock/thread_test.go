//go:build linux

package landlock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRestrictThread restricts one locked thread of the child and checks,
// on that thread, that the policy holds, and that a process it starts
// inherits the domain. The checks run inline, not in subtests: subtests
// run on other goroutines, which may be on other (unrestricted) threads.
func TestRestrictThread(t *testing.T) {
	if !inChild() {
		dir := t.TempDir()
		writeFile(t, dir, "ro/file.txt", "data", 0o644)
		writeFile(t, dir, "secret/file.txt", "secret", 0o644)
		runInChild(t, 6, "LLT_DIR="+dir)
		return
	}
	runtime.LockOSThread() // never unlocked: the thread dies with the test's goroutine
	dir := os.Getenv("LLT_DIR")
	ro, secret := filepath.Join(dir, "ro"), filepath.Join(dir, "secret", "file.txt")
	p := Policy{ReadExec: []string{"/usr", "/etc"}, ReadOnly: []string{ro}, Devices: []string{"/dev/null"}, Scope: true}
	res, err := p.RestrictThread()
	if err != nil {
		t.Fatalf("RestrictThread() = %v, want nil", err)
	}
	if res.ABI < 6 || !slices.Contains(res.Rules, "ro "+ro) || !slices.Contains(res.Rules, "scope signal") {
		t.Errorf("RestrictThread() = %+v, want ABI >= 6 with the ro rule and scoping", res)
	}
	if _, err := os.ReadFile(filepath.Join(ro, "file.txt")); err != nil {
		t.Errorf("read ro/file.txt on the restricted thread = %v, want nil", err)
	}
	if _, err := os.ReadFile(secret); !errors.Is(err, unix.EACCES) {
		t.Errorf("read secret/file.txt on the restricted thread = %v, want EACCES", err)
	}
	if err := unix.Kill(os.Getppid(), 0); !errors.Is(err, unix.EPERM) {
		t.Errorf("kill(parent, 0) on the restricted thread = %v, want EPERM (scoped)", err)
	}
	// A child started from this thread is in the same domain.
	if out, err := exec.Command("/usr/bin/cat", secret).CombinedOutput(); err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("cat secret/file.txt in a child of the restricted thread = %q, %v, want Permission denied", out, err)
	}
	if out, err := exec.Command("/usr/bin/cat", filepath.Join(ro, "file.txt")).CombinedOutput(); err != nil || string(out) != "data" {
		t.Errorf("cat ro/file.txt in a child of the restricted thread = %q, %v, want data", out, err)
	}
}
