package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDeliveryFailed: a failed delivery keeps how the run itself ended in
// analysis_status and analysis_exit_code, exits 122 and puts the cause in
// front of the notes; a second cause adds to the first.
func TestDeliveryFailed(t *testing.T) {
	r := &Report{Status: StatusExitNonzero, ExitCode: 3, CompletionNotes: "The analysis failed (exit code 3)."}
	r.DeliveryFailed("write report /x: permission denied")
	r.DeliveryFailed("collect a into /out: disk full")
	if r.Status != StatusDeliveryFailed || r.ExitCode != ExitDeliveryFailed || r.AnalysisStatus != StatusExitNonzero ||
		r.AnalysisExitCode == nil || *r.AnalysisExitCode != 3 {
		t.Fatalf("DeliveryFailed = %s, exit %d, analysis %s/%v; want delivery_failed, 122, exit_nonzero/3",
			r.Status, r.ExitCode, r.AnalysisStatus, r.AnalysisExitCode)
	}
	want := "The results were not delivered (write report /x: permission denied; collect a into /out: disk full). The analysis failed (exit code 3)."
	if r.CompletionNotes != want {
		t.Errorf("notes = %q, want %q", r.CompletionNotes, want)
	}
}

// TestDeliveryFailedKeepsOutputLimit: an output_limit run that then fails
// delivery keeps the analysis' own status, not output_limit.
func TestDeliveryFailedKeepsOutputLimit(t *testing.T) {
	code := 0
	r := &Report{Status: StatusOutputLimit, ExitCode: ExitOutputLimit, AnalysisStatus: StatusOK, AnalysisExitCode: &code}
	r.DeliveryFailed("cause")
	if r.AnalysisStatus != StatusOK || *r.AnalysisExitCode != 0 {
		t.Errorf("analysis = %s/%d, want ok/0", r.AnalysisStatus, *r.AnalysisExitCode)
	}
}

// TestSummaryAndEncode: the summary line names the status and, when it is
// not ok, why; Encode is indented JSON with a newline that reads back.
func TestSummaryAndEncode(t *testing.T) {
	r := &Report{Schema: ReportSchema, ID: "a1", Status: StatusTimeout, ExitCode: 124, CompletionNotes: "The run timed out.",
		Outputs: []Output{{Path: "f", Type: "file", SHA256: "x"}, {Path: "d", Type: "dir"}}}
	s := r.Summary()
	for _, want := range []string{"scidex-jail: run id=a1 status=timeout exit=124", "output_files=1", ": The run timed out."} {
		if !strings.Contains(s, want) {
			t.Errorf("Summary() = %q, want it to hold %q", s, want)
		}
	}
	b, err := r.Encode()
	if err != nil || !strings.HasSuffix(string(b), "}\n") || !strings.Contains(string(b), "\n  \"id\": \"a1\"") {
		t.Fatalf("Encode() = %q, %v; want indented JSON ending in a newline", b, err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.Status != StatusTimeout || len(back.Outputs) != 2 {
		t.Errorf("Encode read back = %+v, %v; want the same status and outputs", back, err)
	}
}
