package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"golang.org/x/net/dns/dnsmessage"
)

var bytesTarget = fmt.Sprintf("%s:%d", testutil.LabWeb, testutil.LabBytes)

// TestBudgets: over each budget the connection is refused or closed, the
// log says which budget, and no byte past a byte budget is relayed.
func TestBudgets(t *testing.T) {
	hosts := []string{testutil.LabWeb, bytesTarget, "*." + testutil.LabWildcard}
	t.Run("connections", func(t *testing.T) {
		h := newHarness(t, hosts, Budgets{Connections: 3})
		for i := range 3 {
			c, err := h.connect(testutil.LabWeb + ":443")
			if err != nil {
				t.Fatalf("CONNECT %d of 3: %v", i+1, err)
			}
			c.Close()
		}
		_, err := h.connect(testutil.LabWeb + ":443")
		if err == nil || !strings.Contains(err.Error(), "the run's budget of 3 connections is spent") {
			t.Errorf("CONNECT 4 of 3 = %v, want refused over the connection budget", err)
		}
		// The listeners are closed now: the kernel refuses the rest.
		for _, target := range []string{proxyAddr.String(), "127.0.0.1:443"} {
			if c, err := h.jail.DialContext(h.ctx(), "tcp", target); !errors.Is(err, syscall.ECONNREFUSED) {
				if c != nil {
					c.Close()
				}
				t.Errorf("dial %s after the budget = %v, want connection refused", target, err)
			}
		}
		log := h.eng.Stop()
		checkConn(t, log, ViaProxy, Conn{Name: testutil.LabWeb, Port: 443, Decision: Refused, Reason: ReasonConnections})
		if n := log.Totals.ConnsBy[ReasonConnections]; n != 1 {
			t.Errorf("connections refused over the budget = %d, want 1 (the rest refused by the kernel)", n)
		}
	})
	t.Run("open", func(t *testing.T) {
		h := newHarness(t, hosts, Budgets{Open: 1})
		// A client that connects and never finishes its request holds
		// its place from the accept on: such clients cannot pile up.
		held, err := h.jail.DialContext(h.ctx(), "tcp", proxyAddr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		fmt.Fprintf(held, "CONNECT %s:443 HTTP/1.1\r\n", testutil.LabWeb)
		_, err = h.connect(testutil.LabWeb + ":443")
		if err == nil || !strings.Contains(err.Error(), "1 connection is open already") {
			t.Errorf("a second CONNECT with one open = %v, want refused over the open budget", err)
		}
		captured, err := h.dialCaptured(testutil.LabWeb, 443)
		if !refusedDial(captured, err) {
			t.Errorf("a captured connection with one open = %v, want it reset", err)
		}
		held.Close()
		log := h.eng.Stop()
		checkConn(t, log, ViaProxy, Conn{Decision: Refused, Reason: ReasonOpen})
		checkConn(t, log, ViaCaptured, Conn{Name: testutil.LabWeb, Port: 443, Decision: Refused, Reason: ReasonOpen})
		if want := "refused 2 connections to at least 1 name over the budget of connections open at once: api.lab.test:443"; !strings.Contains(log.Summary(), want) {
			t.Errorf("Summary() = %q, want %q", log.Summary(), want)
		}
	})
	t.Run("download", func(t *testing.T) {
		const budget = 1 << 20
		h := newHarness(t, hosts, Budgets{Down: budget})
		c, err := h.connect(bytesTarget)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "get %d\n", 3*budget)
		n, _ := io.Copy(io.Discard, c)
		if n != budget {
			t.Errorf("downloaded %d bytes of %d under a budget of %d, want exactly the budget", n, 3*budget, budget)
		}
		c.Close()
		log := h.eng.Stop()
		got, ok := findConn(log, testutil.LabWeb, testutil.LabBytes, ViaProxy)
		if !ok || got.Decision != Cut || got.Reason != ReasonDownload || got.Down != budget {
			t.Errorf("connection = %+v, want cut over the download budget after %d bytes", got, budget)
		}
		if want := "cut 1 connection to 1 name over the run's download budget: " + bytesTarget; !strings.Contains(log.Summary(), want) {
			t.Errorf("Summary() = %q, want %q", log.Summary(), want)
		}
	})
	t.Run("upload", func(t *testing.T) {
		const budget = 64 << 10
		h := newHarness(t, hosts, Budgets{Up: budget})
		c, err := h.dialCaptured(testutil.LabWeb, testutil.LabBytes)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() {
			fmt.Fprintf(c, "put\n")
			_, _ = io.CopyN(c, strings.NewReader(strings.Repeat("x", 1<<20)), 1<<20)
			closeWrite(c)
		}()
		reply, _ := bufio.NewReader(c).ReadString('\n')
		if reply != "" {
			t.Errorf("the server answered %q, want the connection cut before the upload ended", reply)
		}
		c.Close()
		got, ok := findConn(h.eng.Stop(), testutil.LabWeb, testutil.LabBytes, ViaCaptured)
		if !ok || got.Decision != Cut || got.Reason != ReasonUpload || got.Up != budget {
			t.Errorf("connection = %+v, want cut over the upload budget after %d bytes", got, budget)
		}
	})
	t.Run("time", func(t *testing.T) {
		h := newHarness(t, hosts, Budgets{ConnTime: 200 * time.Millisecond})
		c, err := h.connect(testutil.LabWeb + ":443")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Say nothing; the engine cuts the connection at its time budget.
		// (The deadline here only stops a hang.)
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || isTimeout(err) {
			t.Errorf("read on an idle tunnel = %d, %v, want it closed by the engine", n, err)
		}
		got, ok := findConn(h.eng.Stop(), testutil.LabWeb, 443, ViaProxy)
		if !ok || got.Decision != Cut || got.Reason != ReasonTime {
			t.Errorf("connection = %+v, want cut over the time budget", got)
		}
	})
	t.Run("lookups", func(t *testing.T) {
		h := newHarness(t, hosts, Budgets{Lookups: 3})
		// Three within the budget (a refused question counts too), one
		// over it answered REFUSED, after which the stub's socket is
		// closed and the kernel answers.
		asks := []struct {
			name string
			want dnsmessage.RCode
		}{
			{testutil.LabWeb, dnsmessage.RCodeSuccess},
			{testutil.LabWeb, dnsmessage.RCodeSuccess},
			{testutil.LabEvil, dnsmessage.RCodeRefused},
			{testutil.LabWeb, dnsmessage.RCodeRefused},
		}
		for i, a := range asks {
			if got, err := h.ask(query(t, a.name+".", dnsmessage.TypeA)); err != nil || got != a.want {
				t.Errorf("lookup %d (%s) of a budget of 3 = %v, %v, want %v", i+1, a.name, got, err, a.want)
			}
		}
		// The stub closes its socket just after its last answer: a
		// query sent at once may reach the socket before the close, and
		// be dropped with it (no answer: a timeout, as a resolver's
		// would be). The next ones are the kernel's to refuse.
		var err error
		for try := 0; try < 20; try++ {
			var got dnsmessage.RCode
			got, err = h.askWithin(query(t, testutil.LabWeb+".", dnsmessage.TypeA), 500*time.Millisecond)
			if err == nil {
				t.Fatalf("a lookup after the stub's last answer = %v, want no answer from the stub", got)
			}
			if !isTimeout(err) {
				break
			}
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("a lookup after the stub stopped = %v, want connection refused", err)
		}
		log := h.eng.Stop()
		if n := log.Totals.LookupsBy[ReasonLookups]; n != 1 {
			t.Errorf("lookups refused over the budget = %d, want 1", n)
		}
		if want := "stopped the DNS stub over the run's lookups budget"; !strings.Contains(log.Summary(), want) {
			t.Errorf("Summary() = %q, want %q", log.Summary(), want)
		}
	})
	t.Run("names", func(t *testing.T) {
		h := newHarness(t, hosts, Budgets{Names: 2})
		for i, name := range []string{"a", "b", "c", "a"} {
			_, err := h.resolver.LookupNetIP(h.ctx(), "ip4", name+"."+testutil.LabWildcard)
			if refused := i == 2; refused != (err != nil) {
				t.Errorf("lookup %d (%s) = %v, want refused: %v", i, name, err, refused)
			}
		}
		log := h.eng.Stop()
		if log.Totals.LookupsBy[ReasonTooManyNames] == 0 {
			t.Errorf("lookups by reason = %v, want one over the names budget", log.Totals.LookupsBy)
		}
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestLogBoundedByEngine: a flood of lookups of distinct names keeps
// the log at its entry budget, with exact totals.
func TestLogBoundedByEngine(t *testing.T) {
	h := newHarness(t, []string{testutil.LabWeb}, Budgets{Entries: 5})
	for i := range 50 {
		if _, err := h.ask(query(t, fmt.Sprintf("x%d.exfil.example.", i), dnsmessage.TypeA)); err != nil {
			t.Fatal(err)
		}
	}
	log := h.eng.Stop()
	if len(log.Lookups)+len(log.Conns) != 5 || log.Dropped != 45 || log.Totals.Lookups != 50 || log.Totals.LookupsRefused != 50 {
		t.Errorf("log = %d lookups, %d connections, %d dropped, totals %+v; want 5 entries, 45 dropped, 50 lookups refused",
			len(log.Lookups), len(log.Conns), log.Dropped, log.Totals)
	}
	if want := "(45 egress log entries over the budget not kept)"; !strings.HasSuffix(log.Summary(), want) {
		t.Errorf("Summary() = %q, want it to end %q", log.Summary(), want)
	}
}

// TestConcurrent: many connections at once, captured and proxied, all
// relayed in full, the run's totals exact.
func TestConcurrent(t *testing.T) {
	const n, size = 32, 1 << 20
	h := newHarness(t, []string{bytesTarget}, Budgets{})
	errs := make(chan error, n)
	for i := range n {
		go func() {
			var c net.Conn
			var err error
			if i%2 == 0 {
				c, err = h.connect(bytesTarget)
			} else {
				c, err = h.dialCaptured(testutil.LabWeb, testutil.LabBytes)
			}
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "get %d\n", size)
			got, err := io.Copy(io.Discard, c)
			if err == nil && got != size {
				err = fmt.Errorf("got %d bytes, want %d", got, size)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	log := h.eng.Stop()
	if log.Totals.ConnsAllowed != n || log.Totals.Down != n*size {
		t.Errorf("totals = %+v, want %d allowed, %d bytes down", log.Totals, n, n*size)
	}
}
