package main

import (
	"encoding/json"
	"fmt"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/server"
)

// report is the run's report in a done reply, as much of it as this
// client acts on (tell: the summary line; a delivery failure's whole
// report), and the run's exit status. The server wrote the whole report
// where --report said; the client prints only the summary, so it decodes
// only the summary's fields (reportHead): in a fresh process, the first
// decode of a whole report of `true` took 0.6-0.9 ms, most of it building
// the decoders of the parts no summary reads (limits, enforced, phases).
// A delivery failure prints the whole report: that one is decoded whole.
func (s *session) report(r server.Reply) (*report.Report, int, error) {
	rep, err := decodeReport(r.Report)
	if err != nil {
		return nil, 0, fmt.Errorf("--server %s: the reply's report: %w", s.sock, err)
	}
	code := rep.ExitCode
	if r.ExitCode != nil {
		code = *r.ExitCode
	}
	return rep, code, nil
}

// reportHead is a report with the parts that neither the summary line
// nor the exit status read left undecoded: a field of the outer struct
// hides the embedded Report's of the same JSON name (encoding/json's
// rule for embedded structs), so those stay zero in Report.
type reportHead struct {
	*report.Report
	Limits   json.RawMessage `json:"limits"`
	Enforced json.RawMessage `json:"enforced"`
	Phases   json.RawMessage `json:"phases"`
	Streams  json.RawMessage `json:"streams"`
	Egress   json.RawMessage `json:"egress"`
	Served   json.RawMessage `json:"served"`
}

// decodeReport decodes what tell needs of the report js: its head, or
// all of it when the run's status is a delivery failure (tell prints it
// whole).
func decodeReport(js []byte) (*report.Report, error) {
	head := reportHead{Report: &report.Report{}}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, err
	}
	if head.Status != report.StatusDeliveryFailed {
		return head.Report, nil
	}
	var rep report.Report
	if err := json.Unmarshal(js, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}
