package egress

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// benchBudgets lift the run budgets out of a benchmark's way.
var benchBudgets = Budgets{Connections: 1 << 30, Down: 1 << 50, Up: 1 << 50}

const transferSize = 100 << 20

// BenchmarkTransfer: a 100 MB download from the test internet's server,
// directly from inside the lab (the supervisor's own view) and from the
// jail's namespace through the engine, captured and proxied. The bytes
// port is plain TCP: TLS would cost both sides the same, and the
// engine's work is the copy.
func BenchmarkTransfer(b *testing.B) {
	h := newHarness(b, []string{bytesTarget}, benchBudgets)
	direct := func() (net.Conn, error) {
		return h.lab.Dial(context.Background(), "tcp", netip.AddrPortFrom(testutil.LabWebAddr, testutil.LabBytes).String())
	}
	captured := func() (net.Conn, error) { return h.dialCaptured(testutil.LabWeb, testutil.LabBytes) }
	proxied := func() (net.Conn, error) { return h.connect(bytesTarget) }
	for _, bb := range []struct {
		name string
		dial func() (net.Conn, error)
	}{{"direct", direct}, {"captured", captured}, {"proxy", proxied}} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(transferSize)
			for b.Loop() {
				c, err := bb.dial()
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(c, "get %d\n", transferSize)
				n, err := io.Copy(io.Discard, c)
				c.Close()
				if err != nil || n != transferSize {
					b.Fatalf("downloaded %d bytes, %v; want %d", n, err, transferSize)
				}
			}
		})
	}
}

// BenchmarkSetup: from nothing to the first byte of an answer, name
// lookup included: directly (the lab's DNS, a dial), through the stub and
// a captured connection, and through the proxy (whose client looks
// nothing up).
func BenchmarkSetup(b *testing.B) {
	h := newHarness(b, []string{bytesTarget}, benchBudgets)
	ctx := context.Background()
	direct := func() (net.Conn, error) {
		addrs, err := h.lab.Resolver.LookupNetIP(ctx, "ip4", testutil.LabWeb)
		if err != nil {
			return nil, err
		}
		return h.lab.Dial(ctx, "tcp", netip.AddrPortFrom(addrs[0], testutil.LabBytes).String())
	}
	captured := func() (net.Conn, error) {
		addrs, err := h.resolver.LookupNetIP(ctx, "ip4", testutil.LabWeb)
		if err != nil {
			return nil, err
		}
		return h.jail.DialContext(ctx, "tcp", netip.AddrPortFrom(addrs[0], testutil.LabBytes).String())
	}
	proxied := func() (net.Conn, error) { return h.connect(bytesTarget) }
	for _, bb := range []struct {
		name string
		dial func() (net.Conn, error)
	}{{"direct", direct}, {"captured", captured}, {"proxy", proxied}} {
		b.Run(bb.name, func(b *testing.B) {
			one := make([]byte, 1)
			for b.Loop() {
				c, err := bb.dial()
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(c, "get 1\n")
				if _, err := io.ReadFull(c, one); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}
