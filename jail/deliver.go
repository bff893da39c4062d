package jail

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// deliverReport writes r to path, if one was asked for, and ends the
// report phase on pt. A failure makes the run a delivery failure (the
// report then reaches the caller only on stderr, see the command line).
//
// The report's last phase, "report", covers its own encoding and its write
// to the file: the phase is encoded as reportMark, and its true length
// written over the mark, in the bytes and in the file, once the bytes are
// in the file and before it gets its name.
func deliverReport(r *report.Report, pt *phaseTimer, path string) {
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
		r.DeliveryFailed(err.Error())
	}
}

// reportMark stands for the report phase's length while the report is
// encoded: a number no phase reaches, as wide as any length can be.
const reportMark = 999_999_999_999

// encodeMarked encodes r with its last phase, "report", as reportMark, and
// returns where the mark's digits are in the encoding. `"us": ` only ever
// starts a phase's length (a quote inside a string is escaped), and the
// report phase is the last.
func encodeMarked(r *report.Report, pt *phaseTimer) (b []byte, at int, err error) {
	const key = `"us": `
	r.Phases = append(r.Phases, report.Phase{Name: "report", Where: "supervisor", Micros: reportMark})
	b, err = r.Encode()
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
func stampReport(r *report.Report, pt *phaseTimer, b []byte, at int) []byte {
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
