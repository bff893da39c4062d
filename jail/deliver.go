package jail

import (
	"github.com/scidex/scidex-jail/jail/runfiles"

	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ExitDeliveryFailed is scidex-jail's exit status when the analysis ran
// but its outputs or its report could not be delivered (StatusDeliveryFailed).
// Chosen beside 125-127 (the jail's own failures, as in env(1)) and below
// 128 (signals), where no common tool puts a meaning.
const ExitDeliveryFailed = 122

func (r *Report) encode() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return append(b, '\n'), nil
}

// the cause goes to delivery_errors, and scidex-jail exits 122.
func (r *Report) deliveryFailed(cause string) {
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

// deliverReport writes the report to s.Report, if one was asked for. A
// failure makes the run a delivery failure (the report then reaches the
// caller only on stderr, see the command line).
//
// The report's last phase, "report", covers its own encoding and its write
// to the file: the phase is encoded as reportMark, and its true length
// written over the mark, in the bytes and in the file, once the bytes are
// in the file and before it gets its name.
func (sv *supervisor) deliverReport() {
	if sv.spec.Report == "" {
		sv.lap("report")
		return
	}
	b, at, err := sv.encodeMarked()
	if err == nil {
		err = runfiles.WriteReport(sv.spec.Report, b, func(f *os.File) error {
			_, err := f.WriteAt(sv.stampReport(b, at), int64(at))
			return err
		})
	}
	if err != nil {
		sv.rep.deliveryFailed(err.Error())
	}
}

// reportMark stands for the report phase's length while the report is
// encoded: a number no phase reaches, as wide as any length can be.
const reportMark = 999_999_999_999

// encodeMarked encodes the report with its last phase, "report", as
// reportMark, and returns where the mark's digits are in the encoding.
// `"us": ` only ever starts a phase's length (a quote inside a string is
// escaped), and the report phase is the last.
func (sv *supervisor) encodeMarked() (b []byte, at int, err error) {
	const key = `"us": `
	sv.rep.Phases = append(sv.rep.Phases, Phase{Name: "report", Where: "supervisor", Micros: reportMark})
	b, err = sv.rep.encode()
	if err != nil {
		sv.stampReport(nil, 0)
		return nil, 0, err
	}
	i := bytes.LastIndex(b, []byte(key+strconv.FormatInt(reportMark, 10)))
	if i < 0 {
		sv.stampReport(nil, 0)
		return nil, 0, fmt.Errorf("encode report: bug: the report phase's mark is not in the encoding")
	}
	return b, i + len(key), nil
}

// stampReport ends the report phase: its length goes into the report in
// memory and over the mark's digits at b[at:], padded with the spaces JSON
// allows after a number; it returns those digits.
func (sv *supervisor) stampReport(b []byte, at int) []byte {
	now := time.Now()
	us := now.Sub(sv.last).Microseconds()
	sv.rep.Phases[len(sv.rep.Phases)-1].Micros = us
	sv.last = now
	if b == nil {
		return nil
	}
	digits := b[at : at+len(strconv.FormatInt(reportMark, 10))]
	n := copy(digits, strconv.FormatInt(us, 10))
	for j := n; j < len(digits); j++ {
		digits[j] = ' '
	}
	return digits
}
