package supervise

import (
	"time"

	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// ending is what the event loop saw of the run, returned once the target
// has ended (or the init, without a word on it): the loop's value, from
// which the run's end is settled.
type ending struct {
	started *protocol.Started // the target ran (nil: never)
	tStart  time.Time         // when Started came
	exited  *protocol.Exited  // the init's report of the target's end (nil: none came)
	failure *setupFailure     // the setup error the init reported, or its malformed message
}

// wait runs the event loop while the target runs: the init's messages
// (on c), the timeout and the jail's signals, until the init reports the
// target's end (it then waits, alive, for its run directory to be read)
// or ends without doing so.
func (sv *supervisor) wait(c *initconn.Conn) ending {
	var e ending
	sm := sv.sig
	waited := c.Done()
	var timeout <-chan time.Time
	if t := sv.plan.Run.Timeout; t > 0 {
		tm := time.NewTimer(t)
		defer tm.Stop()
		timeout = tm.C
	}
	msgs := c.Msgs()
	for (waited != nil || msgs != nil) && e.exited == nil {
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				malformed(&e, c)
				continue
			}
			sv.handle(&e, m, c)
		case <-waited:
			waited = nil
		case <-timeout:
			sm.timeout(&e, c)
		case s := <-sm.c:
			sm.whileRunning(s, &e, c)
		}
	}
	return e
}

// handle records one message of the init (on c) in e.
func (sv *supervisor) handle(e *ending, m protocol.InitMsg, c *initconn.Conn) {
	switch m := m.(type) {
	case *protocol.SetupFailed:
		sv.clock.add("init", m.Phases...)
		e.failure = initFailure(m)
	case *protocol.Started:
		sv.clock.add("init", m.Phases...)
		sv.clock.lap("init") // from "go" to the target's start, in the init
		e.started, e.tStart = m, time.Now()
		sv.clock.add("init", protocol.Phase{Name: "exec", Micros: m.Micros})
		sv.sig.started(c)
		sv.running(true)
	case *protocol.SocketsMade:
		sv.serveHook(m) // hook.go
	case *protocol.Exited:
		sv.clock.lap("analysis") // the target's run, as the supervisor saw it
		e.exited = m
		c.MarkEnded()
		sv.sig.disarm()
		if e.started != nil {
			sv.running(false)
		}
	}
	// A second hello is no news: the handshake took the first.
}

// running tells the caller's Options.Running that the target started
// (true) or ended (false).
func (sv *supervisor) running(on bool) {
	if sv.opts.Running != nil {
		sv.opts.Running(on)
	}
}

// malformed records, once the init's messages on c have ended, a line of
// the init that was no message of an init (the connection killed it): the
// run ends as a setup failure of the init, as for one that died, whether
// or not the target had started.
func malformed(e *ending, c *initconn.Conn) {
	if err := c.Err(); err != nil && e.failure == nil {
		e.failure = failAt(protocol.StageInit, err)
	}
}

// release lets an init that reported the target's end exit, once its run
// directory is read, and waits until it has and its socket is closed:
// the init's exit and the kernel's teardown of its namespaces and mounts.
// Signals meanwhile go where they would have gone while the target ran.
func (sv *supervisor) release(e *ending, c *initconn.Conn) {
	c.Release()
	waited, msgs := c.Done(), c.Msgs()
	for waited != nil || msgs != nil {
		select {
		case _, ok := <-msgs:
			if !ok {
				msgs = nil
			}
		case <-waited:
			waited = nil
			sv.clock.lap("teardown")
		case s := <-sv.sig.c:
			sv.sig.whileRunning(s, e, c)
		}
	}
}
