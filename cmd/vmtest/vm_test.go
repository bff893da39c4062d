package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the vmtest binary: with this variable set,
// TestMain runs main, so the end-to-end tests exercise the real command
// line, exit status and output paths.
const runMainEnv = "SCIDEX_VMTEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// vmtestResult is one run of the vmtest binary.
type vmtestResult struct {
	code           int
	stdout, stderr string
}

// runVMTest runs `vmtest args...` in dir.
func runVMTest(t *testing.T, dir string, args ...string) vmtestResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // and its QEMU with it
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run vmtest %q: %v", args, err)
	}
	r := vmtestResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	t.Logf("vmtest %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	return r
}

// testKernels are the kernels the VM tests boot: the installed one always,
// the backports one when -prepare has cached it (the tests never download).
func testKernels(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skipf("qemu-system-x86_64 not found (apt-get install qemu-system-x86): %v", err)
	}
	kernels := []string{KernelInstalled}
	if _, err := installedKernel(backportsRoot("/var/cache/scidex-vmtest")); err == nil {
		kernels = append(kernels, KernelBackports)
	} else {
		t.Logf("backports kernel not cached, testing 6.1 only (vmtest -prepare -kernel backports): %v", err)
	}
	return kernels
}

func TestVM(t *testing.T) {
	kernels := testKernels(t)
	hostTmp := t.TempDir() // under /tmp: kept visible in the VM, as go test's work dir is
	script := filepath.Join(hostTmp, "prog.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho from-tmp \"$@\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("/tmp/scidex-vmtest-marker-%d", time.Now().UnixNano())
	tests := []struct {
		name       string
		dir        string
		args       []string
		wantCode   int
		wantStdout []string // lines, in order
		wantStderr []string // substrings, each
		// perKernel cases check the kernel's side (cgroup2, Landlock) and
		// run on every kernel; the others test the harness, once.
		perKernel bool
	}{
		{
			name:       "exit status and output",
			args:       []string{"--", "/bin/sh", "-c", "echo out; echo err >&2; exit 7"},
			wantCode:   7,
			wantStdout: []string{"out"},
			wantStderr: []string{"err\n"},
			perKernel:  true,
		},
		{
			name: "cgroup2, landlock and a private tmp",
			args: []string{"/bin/sh", "-c", "stat -f -c %T /sys/fs/cgroup /tmp; " +
				"tr ' ' '\\n' </sys/fs/cgroup/cgroup.controllers | grep -xE 'cpu|memory|pids' | sort | tr '\\n' ' '; echo; " +
				"grep -o landlock /sys/kernel/security/lsm; echo secret > " + marker + " && cat " + marker +
				"; echo changed > " + script + "; cat /sys/class/net/lo/operstate; hostname"},
			wantStdout: []string{"cgroup2fs", "tmpfs", "cpu memory pids", "landlock", "secret", "unknown", "scidex-vmtest"},
			perKernel:  true,
		},
		{
			name: "environment and working directory",
			dir:  hostTmp,
			args: []string{"-env", "FOO=bar", "-env", "HOME=/elsewhere", "--", "sh", "-c",
				`echo "$FOO $SCIDEX_IN_VM $SCIDEX_REQUIRE_CGROUP2 $HOME"; pwd; command -v go`},
			wantStdout: []string{"bar 1 1 /elsewhere", hostTmp, "/usr/local/go/bin/go"},
		},
		{
			name:       "binary under /tmp, as go test -exec passes it",
			args:       []string{script, "-test.v", "-test.run=X"},
			wantCode:   3,
			wantStdout: []string{"from-tmp -test.v -test.run=X"},
		},
		{
			name:       "command not found",
			args:       []string{"--", "/nonexistent/cmd"},
			wantCode:   127,
			wantStderr: []string{"/nonexistent/cmd"},
		},
		{
			// 1 ms is too short for any boot: each is taken for a hang.
			name:       "boot hang: boots again, then gives up",
			args:       []string{"-boot-timeout", "1ms", "--", "true"},
			wantCode:   exitFailed,
			wantStderr: []string{"not the test: booting again, attempt 5 of 5"},
		},
		{
			// A panic of the guest kernel, as the TCG races cause: taken
			// for one at least once, and given up after five boots (a
			// boot may also hang before the command, which is retried
			// alike).
			name:       "guest crash: boots again, then gives up",
			args:       []string{"--", "sh", "-c", "echo c >/proc/sysrq-trigger"},
			wantCode:   exitFailed,
			wantStderr: []string{"the guest kernel crashed before the command finished", "not the test: booting again, attempt 5 of 5"},
		},
		{
			name:       "timeout kills the VM",
			args:       []string{"-timeout", "1s", "--", "sleep", "600"},
			wantCode:   exitTimeout,
			wantStderr: []string{"timed out"},
		},
	}
	for i, kernel := range kernels {
		for _, tt := range tests {
			if i > 0 && !tt.perKernel {
				continue
			}
			t.Run(kernel+"/"+tt.name, func(t *testing.T) {
				dir := tt.dir
				if dir == "" {
					dir = "/"
				}
				r := runVMTest(t, dir, append([]string{"-kernel", kernel}, tt.args...)...)
				if r.code != tt.wantCode {
					t.Errorf("vmtest %q: exit = %d, want %d", tt.args, r.code, tt.wantCode)
				}
				if !containsInOrder(r.stdout, tt.wantStdout) {
					t.Errorf("vmtest %q: stdout = %q, want lines containing %q in order", tt.args, r.stdout, tt.wantStdout)
				}
				for _, want := range tt.wantStderr {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("vmtest %q: stderr = %q, want it to contain %q", tt.args, r.stderr, want)
					}
				}
				if want := "vmtest: kernel " + kernel + " "; !strings.Contains(r.stderr, want) {
					t.Errorf("vmtest %q: stderr = %q, want the kernel named: %q", tt.args, r.stderr, want)
				}
			})
		}
	}
	// Writes inside land in the VM's tmpfs, never on the host.
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("stat(%s) on the host after the VM wrote it: err = %v, want not exist", marker, err)
	}
	if b, err := os.ReadFile(script); err != nil || !strings.HasPrefix(string(b), "#!/bin/sh") {
		t.Errorf("ReadFile(%s) on the host = %q, %v; want the script unchanged", script, b, err)
	}
}

// containsInOrder reports whether out has lines containing each of want, in
// that order.
func containsInOrder(out string, want []string) bool {
	lines := strings.Split(out, "\n")
	for _, w := range want {
		for len(lines) > 0 && !strings.Contains(lines[0], w) {
			lines = lines[1:]
		}
		if len(lines) == 0 {
			return false
		}
		lines = lines[1:]
	}
	return true
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantArgs []string
		wantEnv  []string
		wantErr  bool
	}{
		{"dash dash", []string{"-kernel", "6.1", "--", "sh", "-c", "exit 7"}, []string{"sh", "-c", "exit 7"}, nil, false},
		{"go test -exec", []string{"/tmp/go-build1/b001/x.test", "-test.v=true", "-test.timeout=10m0s"},
			[]string{"/tmp/go-build1/b001/x.test", "-test.v=true", "-test.timeout=10m0s"}, nil, false},
		{"env repeated", []string{"-env", "A=1", "-env=B=2=3", "true"}, []string{"true"}, []string{"A=1", "B=2=3"}, false},
		{"env without =", []string{"-env", "A", "true"}, nil, nil, true},
		{"no command", []string{"-kernel", "6.1"}, nil, nil, true},
		{"prepare alone", []string{"-prepare"}, []string{}, nil, false},
		{"bad timeout", []string{"-timeout", "0s", "true"}, nil, nil, true},
		{"bad boot timeout", []string{"-boot-timeout", "-1s", "true"}, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if fmt.Sprint(o.Args) != fmt.Sprint(tt.wantArgs) || fmt.Sprint(o.Env) != fmt.Sprint(tt.wantEnv) {
				t.Errorf("parseFlags(%q) = args %q env %q, want %q %q", tt.args, o.Args, o.Env, tt.wantArgs, tt.wantEnv)
			}
		})
	}
}
