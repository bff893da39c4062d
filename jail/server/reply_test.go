package server

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestEncodeReply: a reply's line is json.Marshal's, byte for byte, a
// done reply's report put in as it is.
func TestEncodeReply(t *testing.T) {
	report, err := os.ReadFile("testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, report); err != nil {
		t.Fatal(err)
	}
	code := 0
	cases := []struct {
		name string
		r    Reply
	}{
		{"done", Reply{Event: Done, Req: "r1", ExitCode: &code, Report: compact.Bytes(), status: "ok"}},
		{"done, a report json.Marshal would compact", Reply{Event: Done, Req: "r1", ExitCode: &code, Report: report}},
		{"accepted", Reply{Event: Accepted, Req: "r1"}},
		{"hello", Reply{Event: Hello, Version: "v1", Protocol: ProtocolVersion}},
		{"error with quotes", Reply{Event: Error, Req: "r1", ExitCode: &code, Error: "a \"quoted\" <message>\n"}},
		{"empty report", Reply{Event: Done, Req: "r1", Report: json.RawMessage{}}},
	}
	for _, c := range cases {
		got, err := encodeReply(c.r)
		want, werr := json.Marshal(c.r)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: encodeReply() = %s, %v, want %s, %v", c.name, got, err, want, werr)
		}
	}
}
