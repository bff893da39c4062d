package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Resolver looks names up for the supervisor; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc connects to an address:port; (*net.Dialer).DialContext is
// one. The engine only ever gives it an IP address, never a name.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Config is what an Engine enforces and how it reaches out.
type Config struct {
	Policy   Policy
	Budgets  Budgets  // zero fields take DefaultBudgets'
	Resolver Resolver // nil: the host's resolver (net.DefaultResolver)
	Dial     DialFunc // nil: a net.Dialer in the supervisor's network namespace
}

// Sockets are what the run's namespace hands the supervisor; any may be
// absent. The engine owns them from Serve on and closes them at Stop.
type Sockets struct {
	DNS   net.PacketConn // the stub, 127.0.0.1:53 (UDP)
	Ports []net.Listener // 0.0.0.0:<port>, one per port of Policy.Ports
	Proxy net.Listener   // the CONNECT proxy, 127.0.0.1:<port>
}

// The engine's own timeouts: generous for a real network, short enough
// that a client stalling a decision cannot hold a slot of the Open budget
// for long.
const (
	defaultHeadTimeout = 10 * time.Second // a CONNECT request's head
	resolveTimeout     = 10 * time.Second
	dialTimeout        = 10 * time.Second
	maxDialAddrs       = 4 // addresses of one name tried before giving up
)

// ErrServing is returned by a second Serve.
var ErrServing = errors.New("egress: engine already served")

// Engine is the supervisor's side of a run's egress: it serves the
// sockets it is handed until Stop.
type Engine struct {
	cfg         Config
	fakes       *fakeMap
	rec         *recorder
	up, down    *pool
	decided     atomic.Int64   // connections accepted, for the Connections budget
	listeners   []net.Listener // set by Serve, closed when Connections is spent
	open        atomic.Int64   // connections open now, for the Open budget
	served      atomic.Bool
	headTimeout time.Duration // defaultHeadTimeout; shorter in tests

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
	live   map[io.Closer]struct{} // sockets and connections to close at Stop
	once   sync.Once
}

// New checks the policy and returns an engine ready to Serve.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Policy.check(); err != nil {
		return nil, fmt.Errorf("egress: policy: %w", err)
	}
	cfg.Budgets = cfg.Budgets.withDefaults()
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	return &Engine{
		cfg:   cfg,
		fakes: newFakeMap(cfg.Budgets.Names),
		rec:   newRecorder(cfg.Budgets.Entries),
		up:    newPool(cfg.Budgets.Up),
		down:  newPool(cfg.Budgets.Down),
		live:  map[io.Closer]struct{}{},

		headTimeout: defaultHeadTimeout,
	}, nil
}

// Serve starts serving s and returns; the engine serves until Stop or
// until ctx is done, whichever comes first.
func (e *Engine) Serve(ctx context.Context, s Sockets) error {
	if !e.served.CompareAndSwap(false, true) {
		return ErrServing
	}
	e.ctx, e.cancel = context.WithCancel(ctx)
	start := func(c io.Closer, f func()) {
		e.track(c)
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			f()
		}()
	}
	if s.DNS != nil {
		start(s.DNS, func() { e.serveDNS(s.DNS) })
	}
	e.listeners = append([]net.Listener(nil), s.Ports...)
	if s.Proxy != nil {
		e.listeners = append(e.listeners, s.Proxy)
	}
	for _, l := range s.Ports {
		start(l, func() { e.accept(l, ViaCaptured) })
	}
	if s.Proxy != nil {
		start(s.Proxy, func() { e.accept(s.Proxy, ViaProxy) })
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		<-e.ctx.Done()
		e.shutdown()
	}()
	return nil
}

// Stop ends every connection, closes the sockets, waits for every
// goroutine of the engine and returns the log. Nothing of the engine runs
// or stays open after it.
func (e *Engine) Stop() Log {
	if e.served.Load() {
		e.cancel()
	}
	e.shutdown()
	e.wg.Wait()
	return e.rec.snapshot()
}

// Log is the log so far, for a run that is still going.
func (e *Engine) Log() Log { return e.rec.snapshot() }

func (e *Engine) shutdown() {
	e.once.Do(func() {
		e.mu.Lock()
		e.closed = true
		live := e.live
		e.live = nil
		e.mu.Unlock()
		for c := range live {
			_ = c.Close()
		}
	})
}

// track registers c to be closed at Stop, closing it now if the engine
// is already stopping; false then.
func (e *Engine) track(c io.Closer) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		_ = c.Close()
		return false
	}
	e.live[c] = struct{}{}
	return true
}

func (e *Engine) untrack(c io.Closer) {
	e.mu.Lock()
	delete(e.live, c)
	e.mu.Unlock()
	_ = c.Close()
}

// accept hands each connection of l to its handler in a goroutine of its
// own, until l is closed.
func (e *Engine) accept(l net.Listener, via Via) {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || e.ctx.Err() != nil {
				return // closed at Stop, or when the connections budget was spent
			}
			// Out of descriptors, or a connection reset before it was
			// accepted: wait a little rather than spin.
			select {
			case <-e.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			_ = c.Close()
			return
		}
		e.live[c] = struct{}{}
		e.wg.Add(1)
		e.mu.Unlock()
		o, held := e.holdOpen()
		go func() {
			defer e.wg.Done()
			defer e.untrack(c)
			switch {
			case !held:
				e.overOpen(c, via, o)
				return
			case via == ViaCaptured:
				defer e.open.Add(-1)
				e.captured(c)
			default:
				defer e.open.Add(-1)
				e.proxied(c)
			}
		}()
	}
}
