package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
)

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h.
const fsImmutableFL = 0x10

// immutable sets the immutable flag on path (chattr +i): not even root may
// create files there. Undone when the test ends.
func immutable(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetInt(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Fatalf("FS_IOC_GETFLAGS %s: %v (the test needs a file system with the immutable flag, e.g. ext4)", path, err)
	}
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, flags|fsImmutableFL); err != nil {
		t.Fatalf("set immutable on %s: %v", path, err)
	}
	t.Cleanup(func() {
		if f, err := os.Open(path); err == nil {
			unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, flags)
			f.Close()
		}
	})
}

// allEntries lists dir recursively (relative paths), nil if it is missing.
func allEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// TestDeliveryDestinationsCheckedFirst: a destination the results cannot
// reach is refused before anything runs, saying why, with nothing made.
func TestDeliveryDestinationsCheckedFirst(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	work := t.TempDir()
	os.Chmod(work, 0o755)
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := filepath.Join(work, "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	full := mk(filepath.Join(work, "full"))
	os.WriteFile(filepath.Join(full, "old.txt"), []byte("old"), 0o644)
	input := mk(filepath.Join(work, "input"))
	checkout := mk(filepath.Join(work, "checkout"))
	data := mk(filepath.Join(checkout, "data"))
	locked := mk(filepath.Join(work, "locked"))
	immutable(t, locked)
	link := filepath.Join(work, "link")
	os.Symlink(mk(filepath.Join(work, "elsewhere")), link)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"collect inside this run's directory", []string{"--collect", filepath.Join(root, "scidex-analysis-dest/sub")}, "inside the run directory"},
		{"collect is this run's directory", []string{"--collect", filepath.Join(root, "scidex-analysis-dest")}, "inside the run directory"},
		{"collect in another run's directory", []string{"--collect", filepath.Join(root, "scidex-analysis-other/x")}, "inside the run directory"},
		{"collect in a half-made run directory", []string{"--collect", filepath.Join(root, ".scidex-analysis-other.0123456789ab.new/x")}, "inside the run directory"},
		{"collect is an existing file", []string{"--collect", file}, "not a directory"},
		{"collect not empty", []string{"--collect", full}, "--collect-merge"},
		{"collect cannot be written", []string{"--collect", filepath.Join(locked, "out")}, "cannot be written"},
		{"collect is an input", []string{"--input", input, "--collect", input}, "the input"},
		{"collect inside an input", []string{"--ro", input, "--collect", filepath.Join(input, "out")}, "the input"},
		{"collect inside a data dir", []string{"--root", checkout, "--collect", filepath.Join(data, "out")}, "the input " + data},
		{"collect around an input", []string{"--rw", input, "--collect", work, "--collect-merge"}, "the input"},
		{"collect is the tmp-root", []string{"--collect", root, "--collect-merge"}, "tmp-root"},
		{"collect is a link", []string{"--collect", link}, "symbolic link"},
		{"collect under /proc", []string{"--collect", "/proc/x"}, "under /proc"},
		{"report is a directory", []string{"--report", work}, "is a directory"},
		{"report under /proc", []string{"--report", "/proc/x"}, "under /proc"},
		{"report in a run directory", []string{"--report", filepath.Join(root, "scidex-analysis-dest/r.json")}, "inside the run directory"},
		{"report directory missing", []string{"--report", filepath.Join(work, "no/r.json")}, "does not exist"},
		{"report cannot be written", []string{"--report", filepath.Join(locked, "r.json")}, "cannot be written"},
		{"report is an input", []string{"--ro", file, "--report", file}, "the input"},
		{"report inside collect", []string{"--collect", filepath.Join(work, "new"), "--report", filepath.Join(work, "new/r.json")}, "inside --collect"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := allEntries(t, work)
			args := append(append([]string{"run", "--id", "dest", "--tmp-root", root}, c.args...), "--", "/bin/sh", "-c", "echo ran > ran.txt")
			cmd := exec.Command(jailBin, args...)
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != 125 || !strings.Contains(string(out), c.want) {
				t.Errorf("scidex-jail %q = exit %d, %q; want exit 125 saying %q", args, cmd.ProcessState.ExitCode(), out, c.want)
			}
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("refused run left %v in the tmp-root, want nothing", got)
			}
			if after := allEntries(t, work); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("refused run changed the destinations' tree: %v, want %v", after, before)
			}
		})
	}
}

// TestCollectNeverOverwrites: --collect-merge adds to a directory, but a
// file of the same name there is an error, reported as delivery_failed with
// the analysis' own ending kept, never an overwrite.
func TestCollectNeverOverwrites(t *testing.T) {
	requireRoot(t)
	dest := filepath.Join(t.TempDir(), "out")
	os.Mkdir(dest, 0o755)
	os.WriteFile(filepath.Join(dest, "a.txt"), []byte("precious"), 0o644)
	r := runJail(t, runOpts{}, "run", "--id", "merge", "--tmp-root", tmpRoot(t), "--collect", dest, "--collect-merge", "--",
		"/bin/sh", "-c", "echo new > a.txt; echo b > b.txt; exit 3")
	wantStatus(t, r, report.StatusDeliveryFailed, report.ExitDeliveryFailed)
	if b, _ := os.ReadFile(filepath.Join(dest, "a.txt")); string(b) != "precious" {
		t.Errorf("existing a.txt = %q after the run, want it untouched", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "b.txt")); string(b) != "b\n" {
		t.Errorf("b.txt = %q, want the other output collected", b)
	}
	rep := r.report
	if rep.AnalysisStatus != report.StatusExitNonzero || rep.AnalysisExitCode == nil || *rep.AnalysisExitCode != 3 {
		t.Errorf("analysis_status, analysis_exit_code = %s, %v; want exit_nonzero, 3", rep.AnalysisStatus, rep.AnalysisExitCode)
	}
	if len(rep.DeliveryErrors) != 1 || !strings.Contains(rep.DeliveryErrors[0], "a.txt") || !strings.Contains(rep.DeliveryErrors[0], "not overwritten") {
		t.Errorf("delivery_errors = %q, want one naming a.txt, not overwritten", rep.DeliveryErrors)
	}
	wantReportOnStderr(t, r, report.StatusDeliveryFailed)

	// Without --collect-merge an empty existing directory is fine.
	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o755)
	r = runJail(t, runOpts{}, "run", "--id", "empty", "--tmp-root", tmpRoot(t), "--collect", empty, "--", "/bin/sh", "-c", "echo x > x.txt")
	wantStatus(t, r, report.StatusOK, 0)
	if got := entries(t, empty); len(got) != 1 || got[0] != "x.txt" {
		t.Errorf("collected into an empty directory: %v, want x.txt", got)
	}
}

// wantReportOnStderr: on a delivery failure the whole report is on stderr.
func wantReportOnStderr(t *testing.T, r result, status report.Status) {
	t.Helper()
	i := strings.Index(r.stderr, "{\n")
	if i < 0 {
		t.Fatalf("stderr holds no JSON report: %q", r.stderr)
	}
	var raw json.RawMessage
	if err := json.NewDecoder(strings.NewReader(r.stderr[i:])).Decode(&raw); err != nil {
		t.Fatalf("JSON report on stderr does not parse: %v\n%s", err, r.stderr)
	}
	validReport(t, raw)
	var rep report.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("JSON report on stderr does not parse: %v\n%s", err, r.stderr)
	}
	if rep.Status != status || rep.ExitCode != report.ExitDeliveryFailed || len(rep.DeliveryErrors) == 0 {
		t.Errorf("report on stderr: status %s, exit %d, delivery_errors %q; want %s, %d, the cause", rep.Status, rep.ExitCode, rep.DeliveryErrors, status, report.ExitDeliveryFailed)
	}
}

// TestDeliveryFailsAfterTheRun: a destination that was fine when checked but
// cannot be written when the run ends makes the run delivery_failed (exit
// 122) with the analysis' exit code kept, never ok with a warning.
func TestDeliveryFailsAfterTheRun(t *testing.T) {
	requireRoot(t)
	t.Run("collect directory made unwritable", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "out")
		os.Mkdir(dest, 0o755)
		cmd, wait := startJail(t, "run", "--id", "undeliv", "--tmp-root", tmpRoot(t), "--collect", dest, "--",
			"/bin/sh", "-c", "echo x > x.txt; echo ready; sleep 0.3")
		immutable(t, dest)
		_ = cmd
		r := wait()
		wantStatus(t, r, report.StatusDeliveryFailed, report.ExitDeliveryFailed)
		if r.report.AnalysisStatus != report.StatusOK || *r.report.AnalysisExitCode != 0 {
			t.Errorf("analysis_status = %s, %d; want ok, 0", r.report.AnalysisStatus, *r.report.AnalysisExitCode)
		}
		wantReportOnStderr(t, r, report.StatusDeliveryFailed)
	})
	t.Run("report directory gone", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "reports")
		os.Mkdir(dir, 0o755)
		reportPath := filepath.Join(dir, "r.json")
		cmd := exec.Command(jailBin, "run", "--id", "norep", "--tmp-root", tmpRoot(t), "--report", reportPath, "--",
			"/bin/sh", "-c", "echo ready; sleep 0.3; exit 4")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
			t.Fatalf("target did not say ready: %q, %v", buf, err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		r := result{code: cmd.ProcessState.ExitCode(), stderr: errb.String()}
		if r.code != report.ExitDeliveryFailed {
			t.Fatalf("exit = %d, want %d; %v", r.code, report.ExitDeliveryFailed, r)
		}
		wantReportOnStderr(t, r, report.StatusDeliveryFailed)
		if !strings.Contains(r.stderr, `"analysis_exit_code": 4`) || !strings.Contains(r.stderr, "write report") {
			t.Errorf("report on stderr lacks the analysis' exit code 4 or the cause: %s", r.stderr)
		}
	})
}

// TestOutputNamesNotUTF8: a name that is not UTF-8 is reported exactly in
// path_b64 beside the lossy path; two such names stay apart.
func TestOutputNamesNotUTF8(t *testing.T) {
	requireRoot(t)
	dest := filepath.Join(t.TempDir(), "out")
	r := runJail(t, runOpts{}, "run", "--id", "names", "--tmp-root", tmpRoot(t), "--collect", dest, "--", "/bin/sh", "-c",
		`printf a > "$(printf 'bad\377\376.txt')"; printf b > "$(printf 'bad\376\377.txt')"; ln -s "$(printf 'to\377')" link; echo c > plain.txt`)
	wantStatus(t, r, report.StatusOK, 0)
	want := map[string]string{"bad\xff\xfe.txt": "a", "bad\xfe\xff.txt": "b"}
	seen := map[string]bool{}
	for _, o := range r.report.Outputs {
		switch {
		case o.Path == "plain.txt":
			if o.PathB64 != "" {
				t.Errorf("plain.txt has path_b64 %q, want none for a UTF-8 name", o.PathB64)
			}
		case o.Path == "link":
			if b, err := base64.StdEncoding.DecodeString(o.TargetB64); err != nil || string(b) != "to\xff" {
				t.Errorf("link_target_b64 = %q (%q, %v), want the exact bytes to\\xff", o.TargetB64, b, err)
			}
		default:
			b, err := base64.StdEncoding.DecodeString(o.PathB64)
			if err != nil {
				t.Errorf("output %q: path_b64 %q: %v", o.Path, o.PathB64, err)
				continue
			}
			name := string(b)
			content, ok := want[name]
			if !ok {
				t.Errorf("path_b64 decodes to %q, not one of the names made", name)
				continue
			}
			seen[name] = true
			if got, err := os.ReadFile(filepath.Join(dest, name)); err != nil || string(got) != content {
				t.Errorf("collected %q = %q, %v; want %q", name, got, err, content)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("non-UTF-8 names told apart: %d, want 2; outputs %+v", len(seen), r.report.Outputs)
	}
}

// TestWallSecondsFromInitClock: the wall time is the init's, from the exec
// to the reaping of the target, not when the supervisor gets to hear of it:
// a supervisor stopped for 2 s while a 0.3 s target runs reports about
// 0.3 s, and never less than the target slept.
func TestWallSecondsFromInitClock(t *testing.T) {
	requireRoot(t)
	cmd, wait := startJail(t, "run", "--id", "wall", "--tmp-root", tmpRoot(t), "--", "/bin/sh", "-c", "echo ready; sleep 0.3")
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	cmd.Process.Signal(syscall.SIGCONT)
	r := wait()
	wantStatus(t, r, report.StatusOK, 0)
	if w := r.report.WallSeconds; w < 0.3 || w >= 2 {
		t.Errorf("wall_seconds = %.3f, want the init's measure of a 0.3 s target (at least 0.3, well below the 2 s the supervisor was stopped)", w)
	}
}
