package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeRepliesInLineOrder: the replies to a connection's lines keep
// the lines' order, each run's accepted first, although a run's accepted
// reply is written beside its start (issue 36): requests and bad lines
// sent in one write, back to back, are answered accepted, accepted,
// bad_request, accepted, then their runs' ends (in any order).
func TestServeRepliesInLineOrder(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1", "--max-runs", "4", "--queue", "4")
	var batch []byte
	var want []string
	for i, name := range []string{"o1", "o2", "bad", "o3"} {
		if name == "bad" {
			batch = append(batch, `{"op":"kill","req":"bad"}`+"\n"...)
			want = append(want, "bad_request bad")
			continue
		}
		line, err := json.Marshal(runReq(name, request.Request{ID: fmt.Sprintf("order-%d", i), Cwd: root, TmpRoot: root}, "/usr/bin/true"))
		if err != nil {
			t.Fatal(err)
		}
		batch = append(append(batch, line...), '\n')
		want = append(want, "accepted "+name)
	}
	c.sendLine(batch)
	for i, w := range want {
		if r := c.next(); r.Event+" "+r.Req != w {
			t.Fatalf("reply %d = %s %s (%s), want %s", i+1, r.Event, r.Req, r.Error, w)
		}
	}
	// The runs end in any order.
	done := map[string]bool{}
	for len(done) < 3 {
		r := c.next()
		if r.Event != "done" || done[r.Req] {
			t.Fatalf("reply %s %s (%s), want the done of o1, o2 or o3 once", r.Event, r.Req, r.Error)
		}
		done[r.Req] = true
	}
}
