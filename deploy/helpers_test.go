package deploy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// jailBin is the jail, built once for these tests; repoRoot the checkout.
var jailBin, repoRoot string

func TestMain(m *testing.M) {
	// Re-executed as the init of a test container (nested_vm_test.go).
	if os.Getenv(containerEnv) != "" {
		containerMain()
	}
	wd, err := os.Getwd()
	if err == nil {
		repoRoot, err = filepath.Abs(filepath.Join(wd, ".."))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The analysis uid must reach the binary's directory (the init, its
	// scidex-jail-init beside it, is exec'd as that uid); in the VM
	// harness the binaries are built
	// outside (building inside is slow under emulation).
	bin, cleanup, err := testutil.JailBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	jailBin = bin
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// requireRoot fails (never skips): these tests install packages and start
// daemons, as root.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("deploy tests need root (euid %d): run them with sudo or in CI as root", os.Geteuid())
	}
}

// requireCommands fails naming the Debian package to install.
func requireCommands(t *testing.T, pkgs map[string]string) {
	t.Helper()
	for cmd, pkg := range pkgs {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Fatalf("%s not found: install the Debian package %s (.ci/deps test does)", cmd, pkg)
		}
	}
}

// sharedDir is a fresh directory under /tmp that every uid can traverse
// (t.TempDir's are 0700), removed afterwards.
func sharedDir(t *testing.T, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func readReport(t *testing.T, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("read report: %v", err)
		return nil
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Errorf("report %s: %v", path, err)
		return nil
	}
	return &r
}

// descendants lists the descendants of pid whose command line starts with
// prefix.
func descendants(pid int, prefix string) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		for _, task := range tasks {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", p, task.Name()))
			for _, f := range strings.Fields(string(b)) {
				var c int
				if _, err := fmt.Sscan(f, &c); err != nil {
					continue
				}
				queue = append(queue, c)
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
				if strings.HasPrefix(strings.ReplaceAll(string(cmd), "\x00", " "), prefix) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// cgroupsOf maps a process's cgroup hierarchies (by controller list, "" for
// v2) to its paths, from /proc/PID/cgroup.
func cgroupsOf(pid int) (map[string]string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 {
			out[parts[1]] = parts[2]
		}
	}
	return out, sc.Err()
}

// cgroupDirsNamed walks every mounted cgroup hierarchy for directories
// whose name contains s.
func cgroupDirsNamed(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil // a cgroup removed while walking
		}
		if d.IsDir() && strings.Contains(d.Name(), s) {
			out = append(out, p)
		}
		return nil
	})
	return out
}
