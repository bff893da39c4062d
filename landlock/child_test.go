//go:build linux

package landlock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Landlock cannot be undone, so every test that restricts runs twice: the
// parent prepares files, listeners and sockets, then re-executes the test
// binary to run just that test with childEnv set; the child restricts itself
// and checks with real syscalls. The parent fails if the child does not
// report PASS for the test (a skip or a filtered-out test is a failure).
const childEnv = "SCIDEX_LANDLOCK_TEST_CHILD"

func inChild() bool { return os.Getenv(childEnv) != "" }

// runInChild runs the current top-level test in a child process with the
// extra environment env ("KEY=value"), on kernels with at least the given
// Landlock ABI.
func runInChild(t *testing.T, abi int, env ...string) {
	t.Helper()
	requireABI(t, abi)
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), childEnv+"="+t.Name()), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("child output:\n%s", out)
	if err != nil {
		t.Fatalf("child run of %s: %v", t.Name(), err)
	}
	if !bytes.Contains(out, []byte("--- PASS: "+t.Name()+" ")) {
		t.Fatalf("child run of %s did not report PASS", t.Name())
	}
}

// requireABI skips the test on kernels older than abi, naming what the probe
// found. The development hosts have ABI 7: a skip there is a failure.
func requireABI(t testing.TB, abi int) {
	t.Helper()
	if got, err := ProbeABI(); got < abi {
		t.Skipf("needs Landlock ABI %d, ProbeABI() = %d, %v", abi, got, err)
	}
}

// systemReadExec is the ReadExec list the children need to run /bin/true
// and /bin/sleep: the system dirs that exist here.
func systemReadExec(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, d := range []string{"/usr", "/bin", "/lib", "/lib64"} {
		if _, err := os.Stat(d); err == nil {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		t.Fatal("none of /usr, /bin, /lib, /lib64 exists")
	}
	return dirs
}

// writeFile creates a file below dir for the test and returns its path.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatalf("os.MkdirAll(%q) = %v, want nil", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatalf("os.WriteFile(%q) = %v, want nil", path, err)
	}
	return path
}

// A check is one syscall-level expectation in a restricted child.
type check struct {
	name string
	call string       // the call, for the failure message
	do   func() error // nil error: the call succeeded
	want []error      // errors any of which is right; none: success expected
}

func runChecks(t *testing.T, checks []check) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if !matches(err, c.want) {
				t.Errorf("%s = %v, want %s", c.call, err, describe(c.want))
			}
		})
	}
}

func matches(err error, want []error) bool {
	if len(want) == 0 {
		return err == nil
	}
	return slices.ContainsFunc(want, func(w error) bool { return errors.Is(err, w) })
}

func describe(want []error) string {
	if len(want) == 0 {
		return "success"
	}
	s := make([]string, len(want))
	for i, w := range want {
		s[i] = fmt.Sprintf("%v", w)
	}
	return strings.Join(s, " or ")
}

// mustRestrict applies p in the child and checks that it was enforced in
// full.
func mustRestrict(t *testing.T, p Policy) Result {
	t.Helper()
	res, err := p.Restrict()
	if err != nil {
		t.Fatalf("Policy.Restrict() = %v, want nil", err)
	}
	if len(res.Degraded) != 0 {
		t.Fatalf("Policy.Restrict().Degraded = %q, want none", res.Degraded)
	}
	return res
}
