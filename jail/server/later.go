package server

import (
	"time"

	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// afterReply is what follows a run's reply: its cleanup (the init's exit,
// the leaf's and the run directory's removal: supervise.RunServed), and
// the end of its count among the runs at their start or end (edge), with
// the pool asked to refill once both are over. The run's place is free
// already: the analysis' tree is dead, and what remains is the kernel's
// work and the files'. The server's Shutdown waits for it (leave comes
// after).
type afterReply struct {
	s       *Server
	edge    *edge
	cleanup *supervise.Cleanup // nil: done before the report (a run that did not end normally)
	// cold: the run's request, when it started cold with slots of another
	// shape ready: the pool's next slots are made in its shape (follow.go).
	cold *request.Request
}

// CleanupFailed is the event of a run whose cleanup after its reply
// failed: Req names it, Error says what is left for gc.
const CleanupFailed Event = "cleanup"

// cleanupPause is how long a run's cleanup waits after its reply is
// written: the client's wake-up and read of the reply, which the
// cleanup's first step (the init's exit: the teardown of its namespaces
// and mounts, a CPU for about 1.5 ms) slowed when it ran beside them.
const cleanupPause = time.Millisecond

// cleanupWriteWait bounds how long a run's cleanup waits for its reply's
// write to end before its pause: a write takes microseconds, and a client
// slow to read (a reply may wait for it up to Config.ReplyWait) holds no
// init, leaf or run directory of its ended runs.
const cleanupWriteWait = 10 * time.Millisecond

// replyThenClean writes the reply, then has the run's cleanup go on a
// pause later (cleanupPause), or at once when the write takes long. A
// cleanup that fails is a later event for the request on the connection
// ("cleanup", after the run's "done"), logged by the server and counted
// in its admission figures; what it left is gc's.
func (c *conn) replyThenClean(r Reply, after afterReply) {
	cleaned, written := make(chan error, 1), make(chan struct{})
	go func() {
		if after.cleanup != nil {
			select {
			case <-written:
				time.Sleep(cleanupPause)
			case <-time.After(cleanupWriteWait):
			}
		}
		err := after.cleanup.Do()
		if after.cold != nil {
			after.s.pool.follow(after.cold)
		}
		if after.edge != nil {
			after.edge.done()
		}
		// The run's end makes room for a slot.
		after.s.pool.kick()
		cleaned <- err
	}()
	c.reply(r)
	close(written)
	if err := <-cleaned; err != nil {
		c.s.cleanupFailed(r.Req, err)
		c.reply(Reply{Event: CleanupFailed, Req: r.Req, Error: err.Error()})
	}
}

// cleanupFailed logs and counts a run's failed cleanup.
func (s *Server) cleanupFailed(req string, err error) {
	s.mu.Lock()
	s.cleanupsFailed++
	s.mu.Unlock()
	s.logf("request %s: %v", req, err)
}
