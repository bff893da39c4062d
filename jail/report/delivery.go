package report

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ExitDeliveryFailed is scidex-jail's exit status when the analysis ran
// but its outputs or its report could not be delivered (StatusDeliveryFailed).
// Chosen beside 125-127 (the jail's own failures, as in env(1)) and below
// 128 (signals), where no common tool puts a meaning.
const ExitDeliveryFailed = 122

// Encode is the report as scidex-jail writes it: indented JSON and a
// newline.
func (r *Report) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return append(b, '\n'), nil
}

// DeliveryFailed turns the report into a delivery failure: the analysis'
// own status and exit code move to analysis_status and analysis_exit_code,
// the cause goes to delivery_errors, and scidex-jail exits 122.
func (r *Report) DeliveryFailed(cause string) {
	if r.Status != StatusDeliveryFailed && r.AnalysisStatus == "" {
		// An output_limit run keeps the analysis' own status here; its
		// own is in the notes.
		r.AnalysisStatus = r.Status
		code := r.ExitCode
		r.AnalysisExitCode = &code
	}
	r.Status = StatusDeliveryFailed
	r.ExitCode = ExitDeliveryFailed
	r.DeliveryErrors = append(r.DeliveryErrors, cause)
	r.CompletionNotes = deliveryNotes(r)
}

// deliveryNotes puts the failed delivery in front of the analysis' own
// completion notes.
func deliveryNotes(r *Report) string {
	if r.ownNotes == "" {
		r.ownNotes = r.CompletionNotes
	}
	return fmt.Sprintf("The results were not delivered (%s). %s", strings.Join(r.DeliveryErrors, "; "), r.ownNotes)
}
