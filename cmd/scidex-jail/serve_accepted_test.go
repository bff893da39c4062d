package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeNothingBeforeAccepted: a run makes nothing, and its analysis
// does not start, before its accepted reply is written (docs/serve.md: a
// client whose server dies before that reply takes the run for one that
// never started). The server's replies are held by a client that does
// not read, with a send buffer smaller than one report: the run's checks
// may go on, its slot and target wait until the client reads.
func TestServeNothingBeforeAccepted(t *testing.T) {
	root := tmpRoot(t)
	requireRoot(t)
	c := startServeBuf(t, exec.Command(jailBin, "serve", "--slots", "1"), 4096)
	// On a failure, the replies held are read away, so that the server
	// ends with its input (startServeBuf's cleanup, run after this one).
	t.Cleanup(func() { go io.Copy(io.Discard, c.r) })
	// Done replies (7 KB reports) fill the buffer: the writer waits for
	// the client, and every reply after it waits behind it. What the
	// kernel holds before the writer waits depends on its accounting of
	// the queued bytes (a VM's older kernel holds less): the test waits
	// until the bytes queued stop growing, then looks at them.
	const fills = 6
	for i := range fills {
		name := fmt.Sprintf("fill%d", i)
		c.send(runReq(name, request.Request{ID: "accepted-" + name, Cwd: root, TmpRoot: root}, "/bin/true"))
	}
	held, last := 0, time.Now()
	waitFor(t, func() bool {
		n, err := unix.IoctlGetInt(c.fd, unix.SIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if n != held {
			held, last = n, time.Now()
		}
		return held > 0 && time.Since(last) > 500*time.Millisecond
	}, "the server's replies to fill the client's socket")
	peek := make([]byte, held+1)
	n, _, err := unix.Recvfrom(c.fd, peek, unix.MSG_PEEK|unix.MSG_DONTWAIT)
	if err != nil {
		t.Fatal(err)
	}
	if done := bytes.Count(peek[:n], []byte(`"event":"done"`)); done >= fills {
		t.Fatalf("all %d done replies fit in the socket (%d bytes queued): the server's writer never waited", done, n)
	}
	// The runs whose replies are held are cleaned up all the same: a
	// client slow to read holds no init, leaf or run directory.
	waitFor(t, func() bool {
		left, _ := filepath.Glob(filepath.Join(root, "scidex-analysis-accepted-fill*"))
		return len(left) == 0
	}, "the run directories of the runs whose replies are held to be removed")
	m := marker(t)
	c.send(runReq("late", request.Request{ID: "accepted-late", Cwd: root, TmpRoot: root}, "/bin/sleep", m))
	// Long enough for the late run to have started many times over had
	// it not waited (a run from a slot starts in a few ms).
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if pids := testutil.ProcessesWith(m); len(pids) > 0 {
			t.Fatalf("the late run's analysis %v started before its accepted reply was written (the client read nothing yet)", pids)
		}
	}
	// The replies held come in an order of their own (the fills run side
	// by side); the late run's accepted is among them.
	ended := map[string]report.Status{}
	var accepted bool
	readUntil := func(want func() bool) {
		t.Helper()
		for !want() {
			switch r := c.next(); {
			case r.Event == "accepted" && r.Req == "late":
				accepted = true
			case r.Event == "done" && r.Req != "late":
				ended[r.Req] = r.report(t).Status
			case r.Event != "accepted":
				t.Fatalf("reply %s to %s (%s), want accepted or done", r.Event, r.Req, r.Error)
			}
		}
	}
	readUntil(func() bool { return accepted })
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "the late run's analysis once accepted")
	readUntil(func() bool { return len(ended) == fills })
	for name, status := range ended {
		if status != report.StatusOK {
			t.Errorf("%s: status %s, want ok", name, status)
		}
	}
	c.send(map[string]any{"op": "cancel", "req": "late"})
	if rep := c.await("late").report(t); rep.Status != report.StatusCancelled {
		t.Errorf("late: status %s, want cancelled", rep.Status)
	}
}
