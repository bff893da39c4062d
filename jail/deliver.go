package jail

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/scidex/scidex-jail/jail/runfiles"
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

// deliveryFailed turns the report into a delivery failure: the analysis'
// own status and exit code move to analysis_status and analysis_exit_code,
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

// deliverReport writes r to path, if one was asked for, and ends the
// report phase on pt. A failure makes the run a delivery failure (the
// report then reaches the caller only on stderr, see the command line).
//
// The report's last phase, "report", covers its own encoding and its write
// to the file: the phase is encoded as reportMark, and its true length
// written over the mark, in the bytes and in the file, once the bytes are
// in the file and before it gets its name.
func deliverReport(r *Report, pt *phaseTimer, path string) {
	if path == "" {
		pt.lap("report")
		r.Phases = append(r.Phases, pt.phases[len(pt.phases)-1])
		return
	}
	b, at, err := encodeMarked(r, pt)
	if err == nil {
		err = runfiles.WriteReport(path, b, func(f *os.File) error {
			_, err := f.WriteAt(stampReport(r, pt, b, at), int64(at))
			return err
		})
	}
	if err != nil {
		r.deliveryFailed(err.Error())
	}
}

// reportMark stands for the report phase's length while the report is
// encoded: a number no phase reaches, as wide as any length can be.
const reportMark = 999_999_999_999

// encodeMarked encodes r with its last phase, "report", as reportMark, and
// returns where the mark's digits are in the encoding. `"us": ` only ever
// starts a phase's length (a quote inside a string is escaped), and the
// report phase is the last.
func encodeMarked(r *Report, pt *phaseTimer) (b []byte, at int, err error) {
	const key = `"us": `
	r.Phases = append(r.Phases, Phase{Name: "report", Where: "supervisor", Micros: reportMark})
	b, err = r.encode()
	if err != nil {
		stampReport(r, pt, nil, 0)
		return nil, 0, err
	}
	i := bytes.LastIndex(b, []byte(key+strconv.FormatInt(reportMark, 10)))
	if i < 0 {
		stampReport(r, pt, nil, 0)
		return nil, 0, fmt.Errorf("encode report: bug: the report phase's mark is not in the encoding")
	}
	return b, i + len(key), nil
}

// stampReport ends the report phase: its length (since pt's last phase)
// goes into r and over the mark's digits at b[at:], padded with the spaces
// JSON allows after a number; it returns those digits.
func stampReport(r *Report, pt *phaseTimer, b []byte, at int) []byte {
	pt.lap("report")
	r.Phases[len(r.Phases)-1] = pt.phases[len(pt.phases)-1]
	if b == nil {
		return nil
	}
	digits := b[at : at+len(strconv.FormatInt(reportMark, 10))]
	n := copy(digits, strconv.FormatInt(r.Phases[len(r.Phases)-1].Micros, 10))
	for j := n; j < len(digits); j++ {
		digits[j] = ' '
	}
	return digits
}
