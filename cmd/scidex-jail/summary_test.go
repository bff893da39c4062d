package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestSummaryDestination: --summary says where the jail's closing line
// goes; stderr keeps only the analysis' bytes unless it is stderr.
func TestSummaryDestination(t *testing.T) {
	requireRoot(t)
	const analysis = "err-text\n"
	for _, c := range []struct {
		name        string
		flag        string // "" for the default
		wantStderr  string // its end, after the analysis' own bytes
		wantSummary bool   // on fd 3
	}{
		{"default: stderr", "", "scidex-jail: run id=sum status=ok exit=0 ", false},
		{"stderr", "--summary=stderr", "scidex-jail: run id=sum status=ok exit=0 ", false},
		{"none", "--summary=none", "", false},
		{"its own descriptor", "--summary=fd:3", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			side := filepath.Join(t.TempDir(), "summary")
			f, err := os.Create(side)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			args := []string{"run", "--id", "sum", "--tmp-root", tmpRoot(t)}
			if c.flag != "" {
				args = append(args, c.flag)
			}
			r := runJail(t, runOpts{extra: []*os.File{f}}, append(args, "--", "/bin/sh", "-c", "printf err-text\\\\n >&2")...)
			wantStatus(t, r, report.StatusOK, 0)
			rest, ok := strings.CutPrefix(r.stderr, analysis)
			if !ok || !strings.HasPrefix(rest, c.wantStderr) || (c.wantStderr == "" && rest != "") {
				t.Errorf("%s: stderr = %q, want %q then %q", c.flag, r.stderr, analysis, c.wantStderr)
			}
			b, err := os.ReadFile(side)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.HasPrefix(string(b), "scidex-jail: run id=sum status=ok"); got != c.wantSummary || (!c.wantSummary && len(b) > 0) {
				t.Errorf("%s: fd 3 got %q, want the summary: %v", c.flag, b, c.wantSummary)
			}
		})
	}
}

// TestSummaryRefused: a destination that is none of the three, or a
// descriptor the jail does not have, is bad input: exit 125, nothing run.
func TestSummaryRefused(t *testing.T) {
	for _, c := range []struct{ flag, want string }{
		{"--summary=file", `"file": give stderr, none or fd:N`},
		{"--summary=fd:2", "N above 2"},
		{"--summary=fd:x", "N above 2"},
		{"--summary=fd:97", "--summary fd:97: bad file descriptor"},
	} {
		r := runJail(t, runOpts{}, "run", "--id", "sumbad", "--tmp-root", tmpRoot(t), c.flag, "--", "/bin/true")
		if r.code != 125 || !strings.Contains(r.stderr, c.want) || r.report != nil {
			t.Errorf("%s: %v\nwant exit 125, no report, a message holding %q", c.flag, r, c.want)
		}
	}
}

// TestSummaryNoneKeepsUndeliveredReport: with no summary line asked for, a
// report that could not be delivered still reaches stderr, its only copy,
// and no summary line comes with it.
func TestSummaryNoneKeepsUndeliveredReport(t *testing.T) {
	requireRoot(t)
	dest := filepath.Join(t.TempDir(), "out")
	os.Mkdir(dest, 0o755)
	_, wait := startJail(t, "run", "--id", "undelivsum", "--tmp-root", tmpRoot(t), "--collect", dest, "--summary=none", "--",
		"/bin/sh", "-c", "echo x > x.txt; echo ready; sleep 0.3")
	immutable(t, dest)
	r := wait()
	wantStatus(t, r, report.StatusDeliveryFailed, report.ExitDeliveryFailed)
	wantReportOnStderr(t, r, report.StatusDeliveryFailed)
	if strings.Contains(r.stderr, "scidex-jail: run id=") {
		t.Errorf("stderr holds the summary line with --summary=none: %q", r.stderr)
	}
}
