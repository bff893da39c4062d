package main

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// hostileCases are run directories an analysis can leave for the trusted
// side to list, hash and copy. Each runs as root and rootless, and must
// end with its status, a true report and nothing left (runHostile); what
// a case costs the trusted side is measured by bench/ (HostileScripts is
// shared with it).
var hostileCases = []struct {
	name    string
	script  string
	extra   []string
	collect bool
	status  report.Status
	check   func(t *testing.T, h *hostileRun)
}{
	{"sparse 1 TiB", testutil.HostileScripts["sparse"], nil, true, report.StatusOutputLimit, func(t *testing.T, h *hostileRun) {
		o, _ := h.output("big.bin")
		if o.Size != 1<<40 || o.SHA256 != "" || !strings.Contains(o.Skipped, "one file") {
			t.Errorf("big.bin = %+v, want its 1 TiB listed, not hashed, the one-file budget named", o)
		}
		if n := h.report.CompletionNotes; !strings.Contains(n, "budget of bytes for one file") || !strings.Contains(n, `"big.bin" (1099511627776 bytes)`) {
			t.Errorf("notes = %q, want the budget, the entry and its size", n)
		}
	}},
	{"many small files", testutil.HostileScripts["many"], nil, false, report.StatusOutputLimit, func(t *testing.T, h *hostileRun) {
		if n := len(h.report.Outputs); n > 10_000 || n < 5_000 {
			t.Errorf("%d outputs listed, want the entry budget's worth (at most 10000)", n)
		}
		if h.reportSz > 4<<20 {
			t.Errorf("report is %d bytes, want it bounded by the entry budget (< 4 MiB)", h.reportSz)
		}
	}},
	{"10000 nested directories", testutil.HostileScripts["deep"], nil, false, report.StatusOutputLimit, func(t *testing.T, h *hostileRun) {
		if h.reportSz > 8<<20 {
			t.Errorf("report is %d bytes, want it bounded by the entry budget (< 8 MiB)", h.reportSz)
		}
		if !strings.Contains(h.report.CompletionNotes, "entry budget (10000)") {
			t.Errorf("notes = %q, want the entry budget named", h.report.CompletionNotes)
		}
	}},
	{"files under 100 nested 255-byte directories", testutil.HostileScripts["longdirs"], nil, false, report.StatusOutputLimit, func(t *testing.T, h *hostileRun) {
		ps := h.paths()
		if len(ps) < 100 || len(ps[0]) != 255 || !strings.HasPrefix(ps[99], ps[0]+"/") {
			t.Errorf("paths %d, first %d bytes: want the 100 directories listed exactly, then the budget", len(ps), len(ps[0]))
		}
		if h.reportSz > 16<<20 {
			t.Errorf("report is %d bytes, want it bounded by the entry budget", h.reportSz)
		}
	}},
	{"names not UTF-8 and 255 bytes", testutil.HostileScripts["names"], nil, true, report.StatusOK, func(t *testing.T, h *hostileRun) {
		want := []string{"a.txt", "d\xff", "d\xff/in", strings.Repeat("n", 255), "z.txt"}
		if got := h.paths(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("paths = %q, want %q exactly", got, want)
		}
	}},
	{"FIFOs, sockets, device-looking entries", testutil.HostileScripts["specials"], nil, true, report.StatusOK, func(t *testing.T, h *hostileRun) {
		for _, p := range []string{"fifo", "sock", "null", "zero"} {
			if o, ok := h.output(p); !ok || o.Type == "file" || o.SHA256 != "" {
				t.Errorf("%s = %+v (listed %v), want listed, never opened", p, o, ok)
			}
		}
		if o, ok := h.output("keep.txt"); !ok || o.SHA256 == "" {
			t.Errorf("keep.txt = %+v, want hashed", o)
		}
	}},
	{"unreadable and unenterable entries", testutil.HostileScripts["unreadable"], nil, false, report.StatusOK, func(t *testing.T, h *hostileRun) {
		secret, _ := h.output("secret")
		locked, _ := h.output("locked")
		if !h.rootless {
			// Root reads past modes: everything is listed and hashed.
			if _, ok := h.output("locked/inner"); !ok || secret.SHA256 == "" {
				t.Errorf("as root: secret %+v, locked/inner listed %v, want both read", secret, ok)
			}
			return
		}
		if !strings.Contains(secret.Skipped, "permission denied") || !strings.Contains(locked.Skipped, "permission denied") {
			t.Errorf("rootless: secret %+v, locked %+v, want both skipped, saying why", secret, locked)
		}
		if _, ok := h.output("z.txt"); !ok {
			t.Errorf("z.txt not listed: an unreadable entry ended the listing")
		}
	}},
	{"200 hard links to a 32 MiB file", testutil.HostileScripts["links"], []string{"--disk", "64M"}, true, report.StatusOutputLimit, func(t *testing.T, h *hostileRun) {
		hashed := 0
		for _, o := range h.report.Outputs {
			if o.SHA256 != "" {
				hashed++
			}
		}
		if hashed != 2 || !strings.Contains(h.report.CompletionNotes, "hashed and copied in all (64MiB)") {
			t.Errorf("%d links hashed, notes %q: want 2 (64 MiB at apparent size) and the budget named", hashed, h.report.CompletionNotes)
		}
	}},
	{"10000 links with 4000-byte targets", testutil.HostileScripts["longlinks"], nil, false, report.StatusOutputLimit, func(t *testing.T, h *hostileRun) {
		if h.reportSz > 24<<20 {
			t.Errorf("report is %d bytes, want it bounded by the entry budget (< 24 MiB)", h.reportSz)
		}
		for _, o := range h.report.Outputs {
			if o.Target != strings.Repeat("\x01", 4000) && !strings.Contains(o.Skipped, "link target not listed") {
				t.Errorf("%s = %d bytes of target, skipped %q: want its 4000 exactly, or why not", o.Path, len(o.Target), o.Skipped)
				break
			}
		}
	}},
	{"symlinks to the host", testutil.HostileScripts["links_out"], nil, true, report.StatusOK, func(t *testing.T, h *hostileRun) {
		for p, target := range map[string]string{"shadow": "/etc/shadow", "root": "/", "p1": "/proc/1/root"} {
			if o, ok := h.output(p); !ok || o.Type != "symlink" || o.Target != target {
				t.Errorf("%s = %+v, want a symlink to %s, not followed", p, o, target)
			}
		}
	}},
}

// TestHostileOutputs runs every hostile case as root and rootless.
func TestHostileOutputs(t *testing.T) {
	requireRoot(t)
	for _, c := range hostileCases {
		for _, m := range modes {
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				h := runHostile(t, m.rootless, c.collect, c.extra, c.script)
				if h.report.Status != c.status {
					t.Fatalf("status %s, want %s; %v", h.report.Status, c.status, h)
				}
				if c.status == report.StatusOutputLimit && (h.code != report.ExitOutputLimit || h.report.AnalysisStatus != report.StatusOK) {
					t.Errorf("exit %d, analysis_status %q: want %d and the analysis' own ok kept", h.code, h.report.AnalysisStatus, report.ExitOutputLimit)
				}
				if c.check != nil {
					c.check(t, h)
				}
			})
		}
	}
}

// TestOutputTimeBudget: the post-run work as a whole has a wall budget;
// when it runs out (here hashing a 1 TiB sparse file with the byte budgets
// off) the run ends output_limit, naming it, and nothing is left.
func TestOutputTimeBudget(t *testing.T) {
	requireRoot(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := runHostile(t, m.rootless, true, []string{"--output-bytes", "none", "--output-file-bytes", "none", "--output-time", "1s"}, testutil.HostileScripts["sparse"])
			wantStatus(t, h.result, report.StatusOutputLimit, report.ExitOutputLimit)
			if n := h.report.CompletionNotes; !strings.Contains(n, "post-run time budget (1s)") {
				t.Errorf("notes = %q, want the post-run time budget named", n)
			}
			if o, _ := h.output("big.bin"); o.SHA256 != "" || !strings.Contains(o.Skipped, "stopped") {
				t.Errorf("big.bin = %+v, want it not hashed, saying the work was stopped", o)
			}
		})
	}
}

// TestCancelDuringAnalysisBoundsPostRun: a cancel while the analysis runs
// leaves the post-run work what is left of the grace period (at least a
// second), whatever the run directory holds: a 1 TiB sparse file with the
// byte budgets off is not hashed for minutes after it.
func TestCancelDuringAnalysisBoundsPostRun(t *testing.T) {
	requireRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), hostileDeadline)
	defer cancel()
	script := "import time\nopen('big.bin', 'wb').truncate(1 << 40)\nprint('ready', flush=True)\ntime.sleep(60)"
	cmd, h := hostileCmd(ctx, t, false, false, []string{"--output-bytes", "none", "--output-file-bytes", "none", "--grace", "1s"}, script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("analysis said %q, want ready", line)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the jail did not end within %s of SIGTERM", hostileDeadline)
	}
	h.finish(t, cmd, err, &bytes.Buffer{}, &bytes.Buffer{})
	if h.report.Status != report.StatusCancelled {
		t.Fatalf("status %s, want cancelled; %v", h.report.Status, h)
	}
	if o, _ := h.output("big.bin"); o.SHA256 != "" || !strings.Contains(o.Skipped, "stopped") {
		t.Errorf("big.bin = %+v, want it not hashed, saying the work was stopped", o)
	}
}
