package server

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// Config is a server's settings.
type Config struct {
	MaxRuns int // runs at once; at least 1
	Queue   int // requests waiting beyond MaxRuns; 0: none wait
	Version string
	Pool    PoolConfig
	// ReplyWait bounds how long a reply waits for its client to read
	// (reply.go); 0: DefaultReplyWait.
	ReplyWait time.Duration
	// Log gets the server's own news: a client dropped, a reply that
	// could not be delivered (the server's stderr).
	Log func(string)
}

// Server runs requests from any number of connections.
type Server struct {
	cfg    Config
	places chan struct{} // a token per run at once
	pool   *pool

	mu      sync.Mutex
	queued  int
	aside   int // runs at their start or end (see around)
	conns   int // clients connected on the socket
	closing bool
	runs    map[*run]struct{}
	wg      sync.WaitGroup
	// cleanupsFailed counts the runs whose cleanup after the reply failed
	// (later.go), for the admission figures.
	cleanupsFailed int
}

// New makes a server and starts preparing its slots.
func New(cfg Config) *Server {
	if cfg.MaxRuns < 1 {
		cfg.MaxRuns = 1
	}
	if cfg.ReplyWait <= 0 {
		cfg.ReplyWait = DefaultReplyWait
	}
	s := &Server{cfg: cfg, places: make(chan struct{}, cfg.MaxRuns), runs: map[*run]struct{}{}}
	s.pool = newPool(cfg.Pool, s.busy)
	return s
}

// busy says whether slots are not to be made now: every run place is
// taken, or a run is at its start or its end.
func (s *Server) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.places) >= s.cfg.MaxRuns || s.aside > 0
}

// edge is one run's place in the count of runs at their start (from
// their place to their target's start) or their end (from the target's
// end to the run's report; its reply, which may wait for a slow client,
// is not counted). No slot is made while any run is there: on the
// server's one P, a slot's clone and exec stalled a run's start by a
// millisecond and more.
type edge struct {
	s     *Server
	aside bool // counted: at the start or the end
}

// enter counts a run that took its place: it is at its start.
func (s *Server) enter() *edge {
	s.around(1)
	return &edge{s: s, aside: true}
}

// running is the run's supervise.Options.Running: its target started (the
// start is over; the pool is asked to refill once the target has run
// longRun) or ended (the end begins). RunWith calls it on the goroutine
// that called RunWith, the one that calls done.
func (e *edge) running(on bool) {
	switch {
	case on && e.aside:
		e.aside = false
		e.s.around(-1)
		time.AfterFunc(longRun, e.s.pool.kick)
	case !on && !e.aside:
		e.aside = true
		e.s.around(1)
	}
}

// done uncounts the run: it has its report.
func (e *edge) done() {
	if e.aside {
		e.aside = false
		e.s.around(-1)
	}
}

// around adds d to the count of runs at their start or end.
func (s *Server) around(d int) {
	s.mu.Lock()
	s.aside += d
	s.mu.Unlock()
}

// longRun is how long a run's target has run when the pool is asked to
// refill beside it: a short run (the most a server sees back to back)
// has ended by then, and its end is not shared with a slot being made.
const longRun = 100 * time.Millisecond

// run is one request's run.
type run struct {
	req string
	// signals is the run's supervise.Options.Signals: one SIGTERM when it is
	// cancelled, never more (stop sends it once, into a buffer of one),
	// so that no cancel ever waits, however many come: a client gone
	// with runs queued cancels them again at every reply that fails, and
	// cancels that waited on a full channel kept the server from ending.
	signals chan os.Signal
	once    sync.Once
	stopped chan struct{} // closed by stop: a queued run leaves the queue
	// Set by admit: when the request was accepted (its queued phase
	// starts there) and the server's figures then.
	accepted time.Time
	served   report.Served
}

func newRun(req string) *run {
	return &run{req: req, signals: make(chan os.Signal, 1), stopped: make(chan struct{})}
}

// stop cancels the run (SIGTERM, as for `run`); again is nothing.
func (r *run) stop() {
	r.once.Do(func() {
		r.signals <- syscall.SIGTERM
		close(r.stopped)
	})
}

// conn is one client: its replies and its runs not yet answered.
type conn struct {
	s      *Server
	w      io.Writer
	hangUp func() // ends the client's connection both ways (nil: cannot)
	wmu    sync.Mutex
	// dead: a reply could not be written, the rest are logged (reply.go).
	// Set under wmu; read without it (gone), so that the request loop
	// never waits behind a reply blocked on a client that does not read.
	dead atomic.Bool
	mu   sync.Mutex
	runs map[string]*run
	wg   sync.WaitGroup
	// accepted is closed once the last accepted reply is written (nil:
	// none yet); the request loop's own replies wait for it, so that
	// they keep the order of the lines they answer (admit.go).
	accepted <-chan struct{}
}

func (c *conn) cancelAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.runs {
		r.stop()
	}
}

// fail replies to a line of the request loop that failed, after the
// accepted replies of the lines before it.
func (c *conn) fail(req string, err error) {
	if c.accepted != nil {
		<-c.accepted
	}
	c.reply(failReply(req, err))
}

// failReply is the reply to a request that failed before its run had a
// report, by what failed: a request that cannot be run as it is
// (bad_request, naming the field), one the server does not take now
// (refused, with the reason), or the host (error). Exit 125 for each, as
// run's own failures before the analysis runs.
func failReply(req string, err error) Reply {
	code := protocol.ExitSetup
	r := Reply{Event: Error, Req: req, ExitCode: &code, Error: err.Error()}
	var (
		re *RequestError
		fe *request.FieldError
		rf *refusal
	)
	switch {
	case errors.As(err, &rf):
		r.Event, r.Reason, r.Error = Refused, rf.reason, rf.why
	case errors.As(err, &re):
		r.Event, r.Field = BadRequest, re.Field
	case errors.As(err, &fe):
		r.Event, r.Field = BadRequest, "run."+fe.Field
	case errors.Is(err, jail.ErrBadSpec):
		// Found by the run's own checks (jail.Spec.Validate): the run
		// object as a whole, the message naming the value.
		r.Event, r.Field = BadRequest, "run"
	}
	return r
}

// refusal is a request the server does not take now, and why.
type refusal struct {
	reason Reason
	why    string
}

func (e *refusal) Error() string { return "refused: " + e.why }

// Serve answers one client reading from r and writing to w until r ends,
// and returns once its runs are answered. A reply that cannot be written
// (the client is gone) cancels the client's runs.
// r may be a *net.UnixConn, over which requests can send descriptors.
func (s *Server) Serve(r io.Reader, w io.Writer) {
	c := &conn{s: s, w: w, runs: map[string]*run{}}
	lr := newLineReader(r)
	defer lr.close()
	if lr.sock != nil {
		c.hangUp = func() { shutdownBoth(lr.sock) }
	}
	c.reply(Reply{Event: Hello, Version: s.cfg.Version, Protocol: ProtocolVersion})
	for {
		line, err := lr.next()
		if errors.Is(err, errTooLong) {
			c.fail("", &RequestError{Err: err}) // the line as a whole
			continue
		}
		if err != nil {
			break
		}
		c.handle(lr, line)
	}
	// No more requests: the runs made go on, and are answered, unless the
	// client is gone altogether (not only done writing): then nobody
	// waits for them.
	done := make(chan struct{})
	if lr.sock != nil {
		go c.cancelWhenGone(lr.sock, done)
	}
	c.wg.Wait()
	close(done)
}

// cancelWhenGone cancels the client's runs once its socket hangs up both
// ways (the client closed it or died; a client that only shut its
// writing side is still there to read), until done.
func (c *conn) cancelWhenGone(sock *net.UnixConn, done <-chan struct{}) {
	raw, err := sock.SyscallConn()
	if err != nil {
		return
	}
	for {
		select {
		case <-done:
			return
		default:
		}
		var hup bool
		raw.Control(func(fd uintptr) {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLHUP}}
			if n, err := unix.Poll(p, 100); err == nil && n > 0 && p[0].Revents&unix.POLLHUP != 0 {
				hup = true
			}
		})
		if hup {
			c.cancelAll()
			return
		}
	}
}

// handle acts on one line.
func (c *conn) handle(lr *lineReader, line []byte) {
	fds := lr.take()
	if c.gone() {
		// Its replies cannot be written: nothing more is run for it.
		closeFDs(fds)
		c.s.logf("a request from a client whose replies could not be written, not read: %.80q", line)
		return
	}
	req, err := DecodeRequest(line)
	if err == nil && req.Stdio != len(fds) {
		err = badField("stdio", "request %s: \"stdio\": %d, but the line came with %d descriptors: send it in one sendmsg with them (SCM_RIGHTS), over a unix socket", req.Req, req.Stdio, len(fds))
	}
	if err != nil {
		closeFDs(fds)
		name := ""
		if req != nil && validName(req.Req) {
			name = req.Req
		}
		c.fail(name, err)
		return
	}
	if req.Op == "cancel" {
		c.mu.Lock()
		r := c.runs[req.Req]
		c.mu.Unlock()
		if r != nil {
			r.stop()
		}
		return
	}
	c.start(req, fds)
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
