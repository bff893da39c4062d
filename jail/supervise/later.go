package supervise

import (
	"errors"
	"fmt"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// A served run's reply does not wait for its cleanup.
//
// Once the init has reported the target's end, every process of the run
// but the init is reaped, and the init has closed its copies of the
// analysis' stdio (the relay's pipes end there). What the report says is
// then known: the outputs are read through the init's root and delivered,
// the streams drained, the leaf's counters read. What is left is the
// kernel's and the files': the init's exit and the teardown of its
// namespaces and mounts, the leaf's removal, the run directory's, the
// ids' release. RunServed leaves that to the Cleanup it returns, and the
// report says so (cleanup "after_reply"); a cleanup that fails leaves
// what it could not remove to the next sweep or `scidex-jail gc`, as a
// one-shot run's does. A run that ended any other way (a setup failure,
// a cancel before the target, an init killed) cleans up before its
// report, as `run` always does.

// RunServed is RunWith for a server, which replies before cleaning up:
// the report is returned once the analysis' tree is dead and its outputs
// listed and delivered, and the rest is left to the returned Cleanup
// (nil: none is left), which the caller must Do once, after the reply.
func RunServed(given *jail.Spec, opts Options) (*report.Report, *Cleanup, error) {
	opts.later = true
	return runWith(given, opts)
}

// A Cleanup is what a served run left to do after its report: the init's
// exit, the leaf's and the run directory's removal, the ids' release.
type Cleanup struct {
	do    func() []string
	lease *uidlease.Lease // released last, as RunWith's
}

// Do carries the cleanup out; an error says what could not be removed
// (left for gc). The second call does nothing.
func (c *Cleanup) Do() error {
	if c == nil || c.do == nil {
		return nil
	}
	warnings := c.do()
	c.do = nil
	c.lease.Release()
	if len(warnings) == 0 {
		return nil
	}
	errs := make([]error, len(warnings))
	for i, w := range warnings {
		errs[i] = errors.New(w)
	}
	return fmt.Errorf("cleanup after the reply: %w (left for scidex-jail gc)", errors.Join(errs...))
}

// finishFirst is finish for a run whose cleanup follows its report: the
// outputs were read in place, and the leaf's counters are read now, the
// leaf left as it is (its last process, the init, waits for its release
// and does no more work: the counters are the run's whole).
func (sv *supervisor) finishFirst(c carried) runFacts {
	usage, warnings := leafUsage(c.init.leaf)
	f := sv.facts(c, *c.out, usage, warnings)
	f.cleanup = report.CleanupAfterReply
	sv.clock.lap("usage")
	return f
}

// leafUsage reads leaf's counters (nil leaf: none).
func leafUsage(leaf *cgroupfs.Leaf) (*cgroupfs.Usage, []string) {
	if leaf == nil {
		return nil, nil
	}
	u, err := leaf.Usage()
	if err != nil {
		return nil, []string{fmt.Sprintf("read cgroup usage: %v", err)}
	}
	return &u, nil
}

// cleanupLater is the cleanup finishFirst left: it releases the init and
// waits for it to exit (its namespaces torn down), then removes the leaf
// and the run directory as finish's cleanup does, and returns its
// warnings.
//
// The init is released here, after the reply, not once its run directory
// was read: its exit tears down its namespaces and its view's mounts,
// about 1.5 ms in which it holds a CPU, and released before the report it
// did so beside the client's wake-up and read of its reply (the reader
// and the stdio pumps of a Python client woken at once, on the other
// CPU). Nothing of the run waits for it: the target's tree is dead, its
// report does not use the init's wait status (the init reported the
// target's end itself), and a server killed meanwhile takes the init with
// it (its parent-death signal).
func (sv *supervisor) cleanupLater(c carried) *Cleanup {
	return &Cleanup{do: func() []string {
		conn := c.init.conn
		conn.Release()
		for range conn.Msgs() {
			// Nothing more is read: the init sends nothing after its
			// report of the end; the channel closes with its socket.
		}
		<-conn.Done()
		conn.Close()
		_, warnings := sv.cleanup(c.init, c.dir, false)
		return warnings
	}}
}
