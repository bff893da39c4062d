package main

import (
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeSlowReader: a client that reads its replies late loses none
// of them and gets no run cancelled. The server's stdin and stdout are one
// socket; reading it made the socket non-blocking for both, and a reply
// written when the socket was full failed with EAGAIN, was lost, and
// cancelled the client's other runs (a burst of 100 runs from Python hung).
func TestServeSlowReader(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--max-runs", "4", "--slots", "0")
	tv := unix.Timeval{Sec: 60}
	if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	// Each report lists 80 files: about 20 kB, 30 of them far more than
	// the socket holds.
	const runs = 30
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(null)
	for i := range runs {
		name := "r" + strconv.Itoa(i)
		c.send(runReq(name, request.Request{ID: "slow-" + name, Cwd: root, TmpRoot: root}, "/bin/sh", "-c",
			"i=0; while [ $i -lt 80 ]; do : > output-file-number-$i-with-a-long-name.txt; i=$((i+1)); done"), null, null, null)
	}
	time.Sleep(3 * time.Second) // the runs end meanwhile; their replies wait
	done := 0
	for done < runs {
		r := c.next()
		switch r.Event {
		case "accepted":
		case "done":
			done++
			if rep := r.report(t); rep.Status != report.StatusOK || len(rep.Outputs) != 80 {
				t.Errorf("%s: status %s (%s), %d outputs; want ok, 80", r.Req, rep.Status, rep.CompletionNotes, len(rep.Outputs))
			}
		default:
			t.Fatalf("reply %+v", r)
		}
	}
}
