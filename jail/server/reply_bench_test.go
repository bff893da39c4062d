package server

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// BenchmarkDoneReply is a done reply's encoding, as execute and reply
// make it, of a served run's report (testdata/report.json, a served
// /usr/bin/true's).
func BenchmarkDoneReply(b *testing.B) {
	data, err := os.ReadFile("testdata/report.json")
	if err != nil {
		b.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		b.Fatal(err)
	}
	code := 0
	for b.Loop() {
		raw, err := json.Marshal(&rep)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := encodeReply(Reply{Event: Done, Req: "r1", ExitCode: &code, Report: raw}); err != nil {
			b.Fatal(err)
		}
	}
}
