package egress

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// TestStopLeavesNothing: with a download in flight, an idle captured
// connection, a CONNECT head never finished and a lookup answered, Stop
// ends them all and returns; afterwards the process has the goroutines
// and descriptors it had before the engine's sockets were made.
func TestStopLeavesNothing(t *testing.T) {
	h := newHarness(t, []string{testutil.LabWeb, bytesTarget}, Budgets{})
	// The harness' engine is not the one measured: its sockets predate
	// the baseline. Stop it, and measure a fresh one on fresh sockets.
	h.eng.Stop()
	p, _ := Parse([]string{testutil.LabWeb, bytesTarget}, nil)
	p = p.withLabPublic(testutil.LabPublic, testutil.LabPublic6)
	settle()
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)

	s, err := jailSockets(h.jail, p)
	if err != nil {
		t.Fatal(err)
	}
	h.eng, err = New(Config{Policy: p, Resolver: h.lab.Resolver, Dial: h.lab.Dial})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Serve(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	download, err := h.connect(bytesTarget)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(download, "get %d\n", 100<<20)
	if _, err := io.ReadFull(download, make([]byte, 1<<20)); err != nil {
		t.Fatalf("the first MiB of the download: %v", err)
	}
	idle, err := h.dialCaptured(testutil.LabWeb, 443)
	if err != nil {
		t.Fatal(err)
	}
	half, err := h.jail.DialContext(h.ctx(), "tcp", proxyAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(half, "CONNECT %s:443 HTTP/1.1\r\n", testutil.LabWeb)

	log := h.eng.Stop()
	if n, err := io.Copy(io.Discard, download); err == nil && n >= 99<<20 {
		t.Errorf("the download went on to its end (%d more bytes) after Stop", n)
	}
	for _, c := range []io.Closer{download, idle, half} {
		c.Close()
	}
	got, ok := findConn(log, testutil.LabWeb, testutil.LabBytes, ViaProxy)
	if !ok || got.Decision != Allowed || got.Reason != ReasonRunEnded {
		t.Errorf("the download's entry = %+v, want allowed, open when the run ended", got)
	}

	// Connections the lab's servers were serving end as they notice:
	// wait for them (bounded: a hang fails, no duration is asserted).
	deadline := time.Now().Add(10 * time.Second)
	for {
		settle()
		g, f := runtime.NumGoroutine(), openFDs(t)
		var added []string
		for fd, what := range f {
			if fds[fd] != what {
				added = append(added, fd+" "+what)
			}
		}
		if g <= goroutines && len(added) == 0 {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("after Stop: %d goroutines (%d before), descriptors not open before: %v; goroutines:\n%s", g, goroutines, added, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func settle() {
	runtime.GC()
	runtime.Gosched()
}

// openFDs are the process' descriptors and what each is (a socket's
// inode, a file's path): a descriptor number reused for another socket
// counts as new.
func openFDs(t *testing.T) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	fds := map[string]string{}
	for _, e := range ents {
		if what, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			fds[e.Name()] = what
		}
	}
	return fds
}
