package cgroupfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// requireVersion skips t unless Create would use cgroup version v here. The
// skip names what the probe found. Under SCIDEX_REQUIRE_CGROUP2=1 a missing
// v2 backend fails instead.
func requireVersion(t *testing.T, v int) {
	t.Helper()
	h, err := readHost()
	if err != nil {
		t.Fatalf("readHost() = %v, want nil", err)
	}
	info, _, err := h.choose("", Limits{})
	if err == nil && info.Version == v {
		return
	}
	why := fmt.Sprintf("probe chose cgroup v%d", info.Version)
	if err != nil {
		why = err.Error()
	}
	if v == 2 {
		if _, err2 := h.probeV2(""); err2 != nil {
			why = err2.Error()
		}
		if testutil.Cgroup2Required() {
			t.Fatalf("%s=1 but the cgroup v2 backend is not usable: %s", testutil.RequireCgroup2Env, why)
		}
	}
	t.Skipf("cgroup v%d backend not in use: %s", v, why)
}

// eachVersion runs f as subtests "v1" and "v2", each skipped unless the
// host uses that backend.
func eachVersion(t *testing.T, f func(t *testing.T, v int)) {
	t.Helper()
	for _, v := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			requireVersion(t, v)
			f(t, v)
		})
	}
}

// testName is a fresh leaf name.
func testName() string {
	return fmt.Sprintf("scidex-test-%d-%08x", os.Getpid(), rand.Uint32())
}

// newLeaf creates a leaf with limits and removes it when the test ends,
// checking that nothing is left behind.
func newLeaf(t *testing.T, c Config) *Leaf {
	t.Helper()
	if c.Name == "" {
		c.Name = testName()
	}
	l, err := Create(c)
	if err != nil {
		t.Fatalf("Create(%+v) = %v, want nil", c, err)
	}
	t.Cleanup(func() {
		if err := l.Remove(); err != nil {
			t.Errorf("Remove() = %v, want nil", err)
		}
		assertGone(t, l.Paths())
	})
	return l
}

// assertGone checks that every directory in dirs has been removed.
func assertGone(t *testing.T, dirs []string) {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("os.Stat(%s) = %v, want ErrNotExist", d, err)
		}
	}
}

// startIn starts /bin/sh -c script inside l before it runs anything: born
// in the leaf through CLONE_INTO_CGROUP on v2, held at a gate until
// AddProcess on v1 (and on v2 when gated is true). The process is killed
// and reaped when the test ends.
func startIn(t *testing.T, l *Leaf, script string, gated bool) *exec.Cmd {
	t.Helper()
	fd, useFD := l.FD()
	if gated || !useFD {
		// The shell blocks reading its first line of stdin until it is in the leaf.
		script = "read _ && " + script
		useFD = false
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: useFD, CgroupFD: fd}
	var gate io.WriteCloser
	if !useFD {
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatalf("StdinPipe() = %v", err)
		}
		gate = w
		defer gate.Close()
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("Start(%q) = %v, want nil", script, err)
	}
	t.Cleanup(func() {
		// Kill by PID of the process we started; Wait reaps it.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if !useFD {
		if err := l.AddProcess(cmd.Process.Pid); err != nil {
			t.Fatalf("AddProcess(%d) = %v, want nil", cmd.Process.Pid, err)
		}
		if _, err := io.WriteString(gate, "go\n"); err != nil {
			t.Fatalf("release gate: %v", err)
		}
	}
	return cmd
}

// procsIn lists the processes in l (all hierarchies).
func procsIn(t *testing.T, l *Leaf) []int {
	t.Helper()
	pids, err := procsOf(l.Paths())
	if err != nil {
		t.Fatalf("procsOf(%v) = %v, want nil", l.Paths(), err)
	}
	return pids
}

// assertIn checks that pid is listed in cgroup.procs of every leaf directory.
func assertIn(t *testing.T, l *Leaf, pid int) {
	t.Helper()
	for _, d := range l.Paths() {
		pids, err := procsOf([]string{d})
		if err != nil {
			t.Fatalf("procsOf(%s) = %v", d, err)
		}
		if !slices.Contains(pids, pid) {
			t.Errorf("procsOf(%s) = %v, want it to hold %d", d, pids, pid)
		}
	}
}

// waitSignaled waits for cmd and checks that it died of SIGKILL.
func waitSignaled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Wait() = %v, want killed by SIGKILL", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("Wait() = %v, want killed by SIGKILL", err)
	}
}

// readTrimmed reads a cgroup file, trimmed.
func readTrimmed(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile(%s) = %v", path, err)
	}
	return strings.TrimSpace(string(b))
}

func isUnsupported(err error) bool { return errors.Is(err, ErrUnsupported) }
