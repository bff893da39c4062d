package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// TestRebind: a name whose answers change between lookups (public, then
// private) is fetched while it resolves to its public address and refused
// once it resolves to the private one; the private address is never
// dialled.
func TestRebind(t *testing.T) {
	h := newHarness(t, []string{testutil.LabRebind}, Budgets{})
	c, err := h.connect(testutil.LabRebind + ":443")
	if err != nil {
		t.Fatalf("first CONNECT %s: %v", testutil.LabRebind, err)
	}
	body, err := h.get(c, testutil.LabRebind, "/")
	if err != nil || !strings.Contains(body, "hello from "+testutil.LabRebind) {
		t.Fatalf("GET https://%s/ = %q, %v, want a greeting", testutil.LabRebind, body, err)
	}
	if c, err := h.connect(testutil.LabRebind + ":443"); err == nil {
		c.Close()
		t.Errorf("second CONNECT %s opened a tunnel, want it refused (the name now resolves to a private address)", testutil.LabRebind)
	} else if !strings.Contains(err.Error(), "10.0.0.5 is private") {
		t.Errorf("second CONNECT %s = %v, want it refused naming 10.0.0.5", testutil.LabRebind, err)
	}
	log := h.eng.Stop()
	if len(log.Conns) != 2 {
		t.Fatalf("connections = %+v, want 2", log.Conns)
	}
	// In the order they were decided: the first ends (and is recorded)
	// when its client and server have closed, which may be after the
	// second's refusal.
	first, second := log.Conns[0], log.Conns[1]
	if first.Decision == Refused {
		first, second = second, first
	}
	if first.Decision != Allowed || first.Dialled != netip.AddrPortFrom(testutil.LabWebAddr, 443).String() {
		t.Errorf("first connection = %+v, want allowed, dialled %s:443", first, testutil.LabWebAddr)
	}
	if second.Decision != Refused || second.Reason != ReasonNotPublic || second.Dialled != "" {
		t.Errorf("second connection = %+v, want refused as not public, nothing dialled", second)
	}
	if n := h.lab.Accepted(netip.AddrPortFrom(testutil.LabPrivateAddr, 443)); n != 0 {
		t.Errorf("the private address accepted %d connections, want 0", n)
	}
}

// scripted answers each lookup of a name with the next of its answers,
// and counts the lookups.
type scripted struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	lookups int
}

func (s *scripted) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.answers[min(s.lookups, len(s.answers)-1)]
	s.lookups++
	return a, nil
}

// recordingDial connects every dial to upstream, whatever the address
// asked for, and records the addresses asked for; with lie set, the
// connection's peer address is upstream's, as a dialler that resolved or
// redirected would report.
type recordingDial struct {
	mu       sync.Mutex
	upstream string
	asked    []string
	lie      bool
}

func (d *recordingDial) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.asked = append(d.asked, address)
	d.mu.Unlock()
	c, err := (&net.Dialer{}).DialContext(ctx, network, d.upstream)
	if err != nil || d.lie {
		return c, err
	}
	return peerAs{c.(*net.TCPConn), net.TCPAddrFromAddrPort(netip.MustParseAddrPort(address))}, nil
}

// peerAs is a connection that reports the peer address it was dialled
// for.
type peerAs struct {
	*net.TCPConn
	peer *net.TCPAddr
}

func (p peerAs) RemoteAddr() net.Addr { return p.peer }

// TestDialsCheckedAddress: one lookup per connection, the dial to the
// address that lookup returned and the check passed, never a name; a
// dialler whose connection's peer is not the checked address is not
// relayed.
func TestDialsCheckedAddress(t *testing.T) {
	public := netip.MustParseAddr("93.184.215.14")
	echo := listenEcho(t)
	tests := []struct {
		name    string
		answers [][]netip.Addr
		lie     bool
		status  []string // each connection's status line
		asked   []string // the dials
	}{
		{"public then loopback", [][]netip.Addr{{public}, {netip.MustParseAddr("127.0.0.1")}}, false,
			[]string{"200", "403 scidex-jail egress: a.example resolves to 127.0.0.1 is loopback"}, []string{"93.184.215.14:443"}},
		{"two public addresses", [][]netip.Addr{{public, netip.MustParseAddr("93.184.215.15")}}, false,
			[]string{"200"}, []string{"93.184.215.14:443"}},
		{"an IPv4-mapped loopback in an AAAA answer", [][]netip.Addr{{netip.MustParseAddr("::ffff:127.0.0.1")}}, false,
			[]string{"403 scidex-jail egress: a.example resolves to ::ffff:127.0.0.1 is IPv4-mapped"}, nil},
		{"a dialler that went elsewhere", [][]netip.Addr{{public}}, true,
			[]string{"502 scidex-jail egress: the dialler connected to " + echo + ", not the checked 93.184.215.14:443"}, []string{"93.184.215.14:443"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := Parse([]string{"a.example"}, nil)
			res := &scripted{answers: tt.answers}
			d := &recordingDial{upstream: echo, lie: tt.lie}
			eng, err := New(Config{Policy: p, Resolver: res, Dial: d.dial})
			if err != nil {
				t.Fatal(err)
			}
			proxy, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			if err := eng.Serve(context.Background(), Sockets{Proxy: proxy}); err != nil {
				t.Fatal(err)
			}
			defer eng.Stop()
			for i, want := range tt.status {
				c, err := net.Dial("tcp", proxy.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(c, "CONNECT a.example:443 HTTP/1.1\r\n\r\n")
				br := bufio.NewReader(c)
				resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
				if err != nil || !strings.HasPrefix(resp.Status, want) {
					t.Errorf("connection %d: CONNECT = %v, %v, want %q", i, resp.Status, err, want)
				}
				if resp.StatusCode == 200 {
					fmt.Fprintf(c, "ping\n")
					if line, err := br.ReadString('\n'); line != "ping\n" {
						t.Errorf("connection %d: echo = %q, %v, want ping", i, line, err)
					}
				}
				c.Close()
			}
			eng.Stop()
			if res.lookups != len(tt.status) {
				t.Errorf("lookups = %d, want one per connection: %d", res.lookups, len(tt.status))
			}
			if strings.Join(d.asked, " ") != strings.Join(tt.asked, " ") {
				t.Errorf("dials = %q, want %q", d.asked, tt.asked)
			}
		})
	}
}

// listenEcho is a TCP server on loopback that echoes what it reads.
func listenEcho(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						c.Write(buf[:n])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestHeadTimeout: a proxy client that never ends its request is cut at
// the head timeout and recorded, its slot freed.
func TestHeadTimeout(t *testing.T) {
	p, _ := Parse([]string{"a.example"}, nil)
	eng, err := New(Config{Policy: p, Budgets: Budgets{Open: 1}})
	if err != nil {
		t.Fatal(err)
	}
	eng.headTimeout = 100 * time.Millisecond
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Serve(context.Background(), Sockets{Proxy: proxy}); err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	c, err := net.Dial("tcp", proxy.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT a.example:443 HTTP/1.1\r\n")
	_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	if got, err := io.ReadAll(c); err != nil || len(got) != 0 {
		t.Errorf("a head never ended = %q, %v, want the connection closed", got, err)
	}
	l := eng.Stop()
	if len(l.Conns) != 1 || l.Conns[0].Reason != ReasonMalformed || !strings.Contains(l.Conns[0].Detail, "did not end within 100ms") {
		t.Errorf("connections = %+v, want one malformed, its head not ended within 100ms", l.Conns)
	}
	if eng.open.Load() != 0 {
		t.Errorf("open connections after = %d, want 0", eng.open.Load())
	}
}
