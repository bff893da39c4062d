package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

var reportSchema = sync.OnceValues(func() (*testutil.ReportSchema, error) {
	return testutil.CompileReportSchema(report.JSONSchema)
})

// validReport fails the test when a report the binary wrote does not match
// the report's JSON Schema. finishJail calls it on every report file the
// end-to-end tests read, so the schema is held against all of them.
func validReport(t *testing.T, b []byte) {
	t.Helper()
	s, err := reportSchema()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// TestSchemaCommand: `scidex-jail schema` prints the schema the packages
// ship, byte for byte.
func TestSchemaCommand(t *testing.T) {
	out, err := exec.Command(jailBin, "schema").Output()
	if err != nil {
		t.Fatalf("scidex-jail schema: %v", err)
	}
	if !bytes.Equal(out, report.JSONSchema) {
		t.Errorf("scidex-jail schema printed %d bytes, want the %d of jail/report/report.schema.json", len(out), len(report.JSONSchema))
	}
}

// TestReportSchemaEveryStatus: a real run ending with each status writes a
// report that matches the schema (finishJail validates it).
func TestReportSchemaEveryStatus(t *testing.T) {
	requireRoot(t)
	py := "/usr/bin/python3"
	for _, c := range []struct {
		status report.Status
		args   []string
	}{
		{report.StatusOK, []string{"--", "/bin/sh", "-c", "echo x > out.txt; ln -s out.txt link; mkdir d"}},
		{report.StatusExitNonzero, []string{"--", "/bin/sh", "-c", "exit 3"}},
		{report.StatusSignaled, []string{"--", "/bin/sh", "-c", "kill -SEGV $$"}},
		{report.StatusTimeout, []string{"--timeout", "300ms", "--grace", "100ms", "--", "/bin/sleep", "10"}},
		{report.StatusSetupError, []string{"--", "no-such-command-xyz"}},
		{report.StatusOOMKilled, []string{"--memory", "64M", "--disk", "0", "--", py, "-c", "a = bytearray(200 << 20)"}},
		{report.StatusPIDsLimit, []string{"--pids", "16", "--", "/bin/sh", "-c", "for i in $(seq 64); do sleep 5 & done; wait"}},
		{report.StatusDiskLimit, []string{"--disk", "64K", "--", "/bin/sh", "-c", "head -c 1M /dev/zero > big"}},
		{report.StatusOutputLimit, []string{"--output-entries", "16", "--", "/bin/sh", "-c", "for i in $(seq 40); do : > f$i; done"}},
	} {
		t.Run(string(c.status), func(t *testing.T) {
			r := runJail(t, runOpts{}, append([]string{"run", "--id", runID(t, "schema"), "--tmp-root", tmpRoot(t)}, c.args...)...)
			if r.report == nil || r.report.Status != c.status {
				t.Fatalf("report %+v, want status %s; %v", r.report, c.status, r)
			}
		})
	}
	t.Run(string(report.StatusCancelled), func(t *testing.T) {
		cmd, wait := startJail(t, "run", "--id", runID(t, "schema"), "--tmp-root", tmpRoot(t), "--grace", "200ms", "--",
			"/bin/sh", "-c", "echo ready; while :; do sleep 1; done")
		cmd.Process.Signal(syscall.SIGTERM)
		wantStatus(t, wait(), report.StatusCancelled, 128+15)
	})
	t.Run(string(report.StatusDeliveryFailed), func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "out")
		if err := os.Mkdir(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		_, wait := startJail(t, "run", "--id", runID(t, "schema"), "--tmp-root", tmpRoot(t), "--collect", dest, "--",
			"/bin/sh", "-c", "echo x > x.txt; echo ready; sleep 0.3")
		immutable(t, dest)
		wantStatus(t, wait(), report.StatusDeliveryFailed, report.ExitDeliveryFailed)
	})
}
