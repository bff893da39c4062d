package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// jailBin is the real binary, built once for the end-to-end tests.
var jailBin string

func TestMain(m *testing.M) {
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

// requireRoot fails (never skips) when not root: these tests exist to run
// as root on a real kernel.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("end-to-end tests need root (euid %d): run them with sudo or in CI as root", os.Geteuid())
	}
}

// tmpRoot is a fresh tmp-root the analysis uid can traverse, like /tmp.
func tmpRoot(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sj-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type result struct {
	code   int
	stdout string
	stderr string
	report *report.Report
}

type runOpts struct {
	stdin string
	env   []string
	extra []*os.File
}

// runJail runs the real binary to completion. args are scidex-jail's
// arguments; --report is added when the args hold --id.
func runJail(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	cmd, rep, out, errb := jailCmd(t, o, args...)
	err := cmd.Run()
	return finishJail(t, cmd, err, rep, out, errb)
}

func jailCmd(t *testing.T, o runOpts, args ...string) (*exec.Cmd, string, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	rep := filepath.Join(t.TempDir(), "report.json")
	full := append([]string{}, args...)
	if len(full) > 0 && full[0] == "run" {
		full = append([]string{"run", "--report", rep}, full[1:]...)
	}
	cmd := exec.Command(jailBin, full...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = strings.NewReader(o.stdin)
	cmd.Env = append(os.Environ(), o.env...)
	cmd.ExtraFiles = o.extra
	return cmd, rep, &out, &errb
}

func finishJail(t *testing.T, cmd *exec.Cmd, err error, rep string, out, errb *bytes.Buffer) result {
	t.Helper()
	r := result{stdout: out.String(), stderr: errb.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run scidex-jail: %v", err)
		}
		r.code = ee.ExitCode()
	}
	if b, err := os.ReadFile(rep); err == nil {
		validReport(t, b)
		r.report = &report.Report{}
		if err := json.Unmarshal(b, r.report); err != nil {
			t.Fatalf("report is not valid JSON: %v\n%s", err, b)
		}
	}
	return r
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func wantStatus(t *testing.T, r result, status report.Status, code int) {
	t.Helper()
	if r.report == nil {
		t.Fatalf("no report written; %v", r)
	}
	if r.report.Status != status || r.code != code || r.report.ExitCode != code {
		t.Fatalf("status, exit = %s, %d (report %d), want %s, %d; %v\nreport notes: %s", r.report.Status, r.code, r.report.ExitCode, status, code, r, r.report.CompletionNotes)
	}
}

// entries lists a directory's names (nil if it does not exist).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// waitGone waits until no host process carries marker, failing after limit.
func waitGone(t *testing.T, marker string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		left := testutil.ProcessesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes with %q still alive after %s: pids %v", marker, limit, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// marker makes a sleep argument unique to this test, so the host's process
// table can be searched for it: GNU sleep accepts fractional seconds.
func marker(t *testing.T) string {
	return fmt.Sprintf("1000.%d", time.Now().UnixNano()%1e9)
}
