package server

import (
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// start admits a run request: its spec resolved, a place among the runs
// at once taken or one in the queue, else refused with the reason. The
// run itself goes on in its own goroutine.
func (c *conn) start(req *Request, fds []int) {
	received := time.Now()
	files := stdioFiles(fds)
	if files == nil {
		c.fail(req.Req, errors.New("open /dev/null for the analysis' stdio failed"))
		return
	}
	spec, err := req.Run.Resolve(req.Over())
	if err != nil {
		closeFiles(files)
		c.fail(req.Req, err)
		return
	}
	spec.Started = received
	r := newRun(req.Req)
	c.mu.Lock()
	if _, dup := c.runs[req.Req]; dup {
		c.mu.Unlock()
		closeFiles(files)
		c.fail(req.Req, badField("req", "request %s: a run of that name is not answered yet: name each request anew", req.Req))
		return
	}
	if err := c.s.admit(r); err != nil {
		c.mu.Unlock()
		closeFiles(files)
		c.fail(req.Req, err)
		return
	}
	c.runs[req.Req] = r
	c.wg.Add(1)
	c.mu.Unlock()
	// The accepted reply is written by whichever comes first: its own
	// goroutine, or the run as it is about to make something
	// (supervise.Options.Begin), which nothing of the run precedes: the
	// client takes a connection lost before its accepted reply for a run
	// that never started. The run's checks and plan go first, on this
	// thread; with the server's one P, the reply's goroutine runs only
	// when the run blocks, so the run mostly writes it itself (a
	// goroutine switch to wait for it cost ~0.1 ms of its slot phase). A
	// run waiting for a place still has its reply written at once.
	// Replies keep their order: this accepted follows the last one
	// (prev), and the run's replies and the connection's later failures
	// follow it (fail).
	prev, sent := c.accepted, make(chan struct{})
	c.accepted = sent
	var once sync.Once
	accept := func() {
		once.Do(func() {
			if prev != nil {
				<-prev
			}
			c.reply(Reply{Event: Accepted, Req: req.Req})
			close(sent)
		})
	}
	go accept()
	go func() {
		defer c.wg.Done()
		c.carryOut(r, req.Run, spec, files, accept)
		c.mu.Lock()
		delete(c.runs, r.req)
		c.mu.Unlock()
	}()
	// The run goes first on this thread (Go runs the goroutine made last
	// here once this one yields).
	runtime.Gosched()
}

// carryOut runs r and replies, once its accepted reply is written
// (accept: its write, or the wait for it). Its place is freed once the run has ended, before
// the reply is written: a client slow to read (or not reading) holds up
// its own replies, never another client's runs.
func (c *conn) carryOut(r *run, asked *request.Request, spec *jail.Spec, files []*os.File, accept func()) {
	defer c.s.leave(r) // after the reply and the cleanup: Shutdown waits for them (bounded, reply.go)
	reply, after := c.s.execute(r, asked, spec, files, accept)
	accept() // a run that failed before its start did not write it (Begin)
	// Closed before the reply, not after the cleanup: every other writer
	// of the analysis' stdio is gone by now (the init closes its copies
	// before it reports the end, the relay has drained), so the client
	// reads the streams' end with the reply, not a cleanup later.
	closeFiles(files)
	c.replyThenClean(reply, after)
}

// execute waits for a place, runs, frees the place, and returns the reply
// and what follows it (later.go).
func (s *Server) execute(r *run, asked *request.Request, spec *jail.Spec, files []*os.File, accept func()) (Reply, afterReply) {
	// A place, or a cancel while waiting for one: then the run ends at
	// its first step, with its report (cancelled, nothing made), as a
	// cancel right after `run --ready-fd` does (its SIGTERM is still in
	// r.signals). A free place goes first.
	select {
	case s.places <- struct{}{}:
		defer func() { <-s.places }()
	default:
		select {
		case s.places <- struct{}{}:
			defer func() { <-s.places }()
		case <-r.stopped:
		}
	}
	s.unqueue()
	e := s.enter()
	slots, missed := s.pool.taker()
	rep, later, err := supervise.RunServed(spec, supervise.Options{Signals: r.signals, Stdio: files, Slots: slots, Running: e.running,
		Accepted: r.accepted, Begin: accept, Served: &r.served})
	after := afterReply{s: s, edge: e, cleanup: later}
	if err != nil {
		return failReply(r.req, err), after
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return failReply(r.req, errors.New("bug: the report could not be encoded: "+err.Error())), after
	}
	if rep.Start == "cold" && *missed && analysisStarted(rep) {
		after.cold = asked
	}
	code := rep.ExitCode
	return Reply{Event: Done, Req: r.req, ExitCode: &code, Report: b, status: string(rep.Status)}, after
}

// admit counts r in the queue, or refuses it: the queue is full, or the
// server is ending. An admitted r has the server's figures as they were
// before it came, and the time, for its report.
func (s *Server) admit(r *run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return &refusal{ShuttingDown, "the server is shutting down"}
	}
	if s.queued >= s.cfg.Queue+s.cfg.MaxRuns-len(s.places) {
		return &refusal{QueueFull, strconv.Itoa(s.cfg.MaxRuns) + " runs at once and " + strconv.Itoa(s.cfg.Queue) +
			" waiting, the most this server takes (its max runs and queue): try again later"}
	}
	r.served = report.Served{MaxRuns: s.cfg.MaxRuns, Queue: s.cfg.Queue, Running: len(s.places), QueuedAhead: s.queued,
		CleanupsFailed: s.cleanupsFailed}
	r.accepted = time.Now()
	s.queued++
	s.runs[r] = struct{}{}
	s.wg.Add(1)
	return nil
}

func (s *Server) unqueue() {
	s.mu.Lock()
	s.queued--
	s.mu.Unlock()
}

func (s *Server) leave(r *run) {
	s.mu.Lock()
	delete(s.runs, r)
	s.mu.Unlock()
	s.wg.Done()
}

// Shutdown refuses new runs, cancels every run (queued ones and running
// ones alike end cancelled, with their reports: a queued one runs to its
// first step), waits for them and destroys every slot.
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.closing = true
	for r := range s.runs {
		r.stop()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.pool.close()
}

// stdioFiles are the analysis' stdin, stdout and stderr: the request's,
// or /dev/null, never the server's own (its protocol, on stdio).
func stdioFiles(fds []int) []*os.File {
	if len(fds) == 0 {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil
		}
		return []*os.File{null, null, null}
	}
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "stdio-"+strconv.Itoa(i))
	}
	return files
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close() // a second Close of a shared /dev/null is harmless
	}
}
