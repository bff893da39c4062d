package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestEgressBudgets: over a budget the connection is cut or refused, the
// run's status is the analysis' own (a note, not a status: the analysis
// saw a closed connection and its exit says whether it coped, as for the
// stdio budget), and the report's egress section and notes say which
// budget; the log keeps at most the output-entries budget of entries and
// counts the rest.
func TestEgressBudgets(t *testing.T) {
	requireRoot(t)
	lab := testutil.NewLab(t)
	bytesHost := testutil.LabWeb + ":" + strconv.Itoa(testutil.LabBytes)
	t.Run("download", func(t *testing.T) {
		probes := []egressProbe{{"4 MB", fmt.Sprintf("get('%s', %d, 4000000)", testutil.LabWeb, testutil.LabBytes), ""}}
		args := append(egressArgs(t, lab, "egress-down", bytesHost), "--egress-download", "1M", "--")
		r := runInLab(t, lab, append(args, egressArgv(t, probes)...)...)
		wantStatus(t, r, report.StatusOK, 0)
		got := probeResults(t, r)["4 MB"]
		n, _ := strconv.Atoi(got[strings.LastIndex(got, " ")+1:])
		if n <= 0 || n > 1<<20 {
			t.Errorf("get 4000000 with a 1M download budget = %q, want some bytes and at most 1M", got)
		}
		c := conns(r.report.Egress, testutil.LabWeb, testutil.LabBytes)
		if len(c) != 1 || c[0].Decision != "cut" || c[0].Reason != "download" || c[0].BytesDown > 1<<20 {
			t.Errorf("egress connections = %+v, want one cut over the download budget, at most 1M relayed", c)
		}
		if l := r.report.Limits.Values; l.Int(limitsEgressDownload()) != 1<<20 {
			t.Errorf("limits egress download = %d, want 1M", l.Int(limitsEgressDownload()))
		}
		if !strings.Contains(r.report.CompletionNotes, "cut 1 connection to 1 name over the run's download budget: "+bytesHost) {
			t.Errorf("completion notes = %q, want the cut named", r.report.CompletionNotes)
		}
	})
	t.Run("upload", func(t *testing.T) {
		probes := []egressProbe{{"4 MB", fmt.Sprintf("put('%s', %d, 4000000)", testutil.LabWeb, testutil.LabBytes), ""}}
		args := append(egressArgs(t, lab, "egress-up", bytesHost), "--egress-upload", "1M", "--")
		r := runInLab(t, lab, append(args, egressArgv(t, probes)...)...)
		wantStatus(t, r, report.StatusOK, 0)
		c := conns(r.report.Egress, testutil.LabWeb, testutil.LabBytes)
		if len(c) != 1 || c[0].Decision != "cut" || c[0].Reason != "upload" || c[0].BytesUp > 1<<20 {
			t.Errorf("egress connections = %+v (probe %q), want one cut over the upload budget, at most 1M relayed", c, probeResults(t, r)["4 MB"])
		}
		if !strings.Contains(r.report.CompletionNotes, "over the run's upload budget") {
			t.Errorf("completion notes = %q, want the cut named", r.report.CompletionNotes)
		}
	})
	t.Run("connection time", func(t *testing.T) {
		probes := []egressProbe{{"idle", fmt.Sprintf("idle('%s', %d)", testutil.LabWeb, testutil.LabBytes), "closed"}}
		args := append(egressArgs(t, lab, "egress-time", bytesHost), "--egress-connection-time", "1s", "--")
		r := runInLab(t, lab, append(args, egressArgv(t, probes)...)...)
		wantStatus(t, r, report.StatusOK, 0)
		if got := probeResults(t, r)["idle"]; !strings.HasPrefix(got, "closed") {
			t.Errorf("an idle connection with a 1s time budget: %q, want it closed by the supervisor", got)
		}
		c := conns(r.report.Egress, testutil.LabWeb, testutil.LabBytes)
		if len(c) != 1 || c[0].Decision != "cut" || c[0].Reason != "time" {
			t.Errorf("egress connections = %+v, want one cut over the time budget", c)
		}
		if !strings.Contains(r.report.CompletionNotes, "over the time budget of a connection") {
			t.Errorf("completion notes = %q, want the cut named", r.report.CompletionNotes)
		}
	})
	t.Run("connections and entries", func(t *testing.T) {
		probes := []egressProbe{{"5 connections", fmt.Sprintf("gets('%s', %d, 5)", testutil.LabWeb, testutil.LabBytes), ""}}
		args := append(egressArgs(t, lab, "egress-conns", bytesHost), "--egress-connections", "3", "--output-entries", "3", "--")
		r := runInLab(t, lab, append(args, egressArgv(t, probes)...)...)
		wantStatus(t, r, report.StatusOK, 0)
		// The fourth is accepted, refused over the budget (reset), and the
		// supervisor stops listening: the kernel refuses the fifth.
		if got := probeResults(t, r)["5 connections"]; !strings.HasPrefix(got, "ok ok ok ") || !strings.HasSuffix(got, " ConnectionRefusedError") {
			t.Errorf("5 connections with a budget of 3 = %q, want 3 ok, then refused by the kernel", got)
		}
		e := r.report.Egress
		if n := len(e.Lookups) + len(e.Connections); n > 3 || e.Dropped == 0 || e.Totals.Connections < 3 {
			t.Errorf("egress = %d entries, %d dropped, totals %+v; want at most 3 kept, the rest dropped and counted", n, e.Dropped, e.Totals)
		}
		for _, w := range []string{"refused 1 connection over the run's connection budget (the supervisor then stopped listening)", "egress log entries over the budget not kept"} {
			if !strings.Contains(r.report.CompletionNotes, w) {
				t.Errorf("completion notes = %q, want them to hold %q", r.report.CompletionNotes, w)
			}
		}
	})
}
