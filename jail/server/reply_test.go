package server

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
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

// TestFailAfterAccepted: a failure the request loop replies waits for the
// accepted reply of the line before it, written beside its run's start,
// so that the client reads the replies in the order of its lines.
func TestFailAfterAccepted(t *testing.T) {
	var out bytes.Buffer
	c := &conn{s: &Server{}, w: &out, runs: map[string]*run{}}
	accepted := make(chan struct{})
	c.accepted = accepted
	failed := make(chan struct{})
	go func() {
		c.fail("r2", badField("op", "request r2: unknown op"))
		close(failed)
	}()
	select {
	case <-failed:
		t.Fatalf("fail() wrote %q before the accepted reply before it", out.String())
	case <-time.After(50 * time.Millisecond):
		// Not a timed assertion: the wait only gives a fail that does
		// not wait its chance to write first.
	}
	c.reply(Reply{Event: Accepted, Req: "r1"})
	close(accepted)
	<-failed
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"accepted"`) || !strings.Contains(lines[1], `"bad_request"`) {
		t.Errorf("replies = %q, want accepted r1, then bad_request r2", lines)
	}
}
