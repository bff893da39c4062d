package supervise

import (
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// deliverReport ends the report phase on pt (settling the status and
// assembling the report) and writes r to rf, if a report was asked for. The
// encoding and the write come after the phase and are not in it: the
// report cannot time its own write. A failure makes the run a delivery
// failure (the report then reaches the caller only on stderr, see the
// command line).
func deliverReport(r *report.Report, pt *phaseTimer, rf *runfiles.ReportFile) {
	pt.lap("report")
	r.Phases = append(r.Phases, pt.phases[len(pt.phases)-1])
	if rf == nil {
		return
	}
	b, err := r.Encode()
	if err == nil {
		err = rf.Write(b)
	}
	if err != nil {
		r.DeliveryFailed(err.Error())
	}
}
