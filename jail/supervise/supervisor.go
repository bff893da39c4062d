package supervise

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/relay"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// The steps of execute (run.go), in order: each carries out its part of
// the plan and returns what it made, and the stage and error of a
// failure.

// create makes the run's cgroup leaf, as planned (nil: the plan has none),
// and its view for the report.
func (sv *supervisor) create() (*cgroupfs.Leaf, *report.CgroupReport, *setupFailure) {
	leaf, warnings, err := createLeaf(sv.plan.Cgroup, sv.plan.Run.TmpRoot)
	sv.warnings = append(sv.warnings, warnings...)
	if err != nil {
		return nil, nil, failAt(protocol.StageCgroup, err)
	}
	var cg *report.CgroupReport
	if leaf != nil {
		cg = leafReport(leaf)
	}
	sv.clock.lap("cgroup")
	return leaf, cg, nil
}

// spawn starts the init from prog, born in leaf, with r's pipes in place
// of the caller's files that r relays. The spawner (v1) is returned even
// on a failure: the leaf's removal ends it.
func (sv *supervisor) spawn(prog *initconn.Program, leaf *cgroupfs.Leaf, r *relay.Relay) (*initconn.Conn, *initconn.Spawner, *setupFailure) {
	conn, sp, err := initconn.Start(prog, leaf, procAttrIn(sv.plan, leaf), stdio(r, sv.opts.Stdio))
	r.Handed()
	if err != nil {
		if initconn.IsEnterError(err) {
			return nil, sp, failAt(protocol.StageCgroup, err)
		}
		return nil, sp, failAt(protocol.StageSpawn, err)
	}
	sv.clock.lap("spawn")
	return conn, sp, nil
}

// makeRunDir sweeps what dead jails left and makes the run directory. An
// error (the ID in use) means the run cannot begin: in's init, never
// told anything, and its leaf are ended first, so nothing is left.
func (sv *supervisor) makeRunDir(in spawned) (*runfiles.Dir, *setupFailure, error) {
	p := &sv.plan.Run
	sv.warnings = append(sv.warnings, runfiles.SweepLeftovers(p.TmpRoot, p.Report)...)
	sv.clock.lap("sweep")
	var leased func(uint32) bool
	if p.Leased != (uidlease.Range{}) {
		leased = func(owner uint32) bool { return p.Leased.Contains(uint64(owner)) }
	}
	var dir *runfiles.Dir
	var stale bool
	var err error
	err = runfiles.ErrOtherDevice
	if in.anchor.For(p.Owner[0], p.Owner[1]) {
		// The slot's, made ahead: named for the run by one rename.
		dir, stale, err = in.anchor.Claim(p.TmpRoot, p.ID, leased)
	}
	if errors.Is(err, runfiles.ErrOtherDevice) {
		// None made ahead that fits: an anchor left is discarded with
		// the cleanup.
		dir, stale, err = runfiles.CreateDirLeased(p.TmpRoot, p.ID, p.Owner[0], p.Owner[1], leased)
	}
	if err != nil {
		in.conn.Abort()
		closeLeaf(in.leaf, in.spawner, in.conn, false)
		return nil, nil, err
	}
	if dir.Path() != sv.plan.Init.RunDir {
		sv.clock.add("init", in.conn.Abort()...)
		return dir, failAt(protocol.StageRunDir, fmt.Errorf("bug: run directory %s, planned %s", dir.Path(), sv.plan.Init.RunDir)), nil
	}
	if stale {
		sv.warnings = append(sv.warnings, "removed a leftover run directory of a dead earlier run with this ID")
	}
	sv.clock.lap("rundir")
	return dir, nil, nil
}

// configure sends the init in its config and "go". A cancel that arrived
// meanwhile ends the init before "go", with no failure.
func (sv *supervisor) configure(in spawned, r *relay.Relay) *setupFailure {
	conn := in.conn
	cfg, err := withLimits(sv.plan, in.leaf)
	if err != nil {
		sv.abort(conn)
		return failAt(protocol.StageMeminfo, err)
	}
	if in.slot != nil {
		return sv.configureSlot(in, r, &cfg)
	}
	err = conn.SendConfig(&cfg)
	sv.clock.lap("config")
	if err != nil {
		// An init that is gone before reading its config: one that is
		// no init of ours says so first.
		if herr := conn.AwaitHello(sv.sig.c, sv.sig.take); herr != nil {
			err = herr
		}
		if f := sv.abortReported(conn); f != nil {
			return f
		}
		if _, ok := err.(*initconn.InitError); ok {
			return failAt(protocol.StageInit, err)
		}
		return failAt(protocol.StageSpawn, fmt.Errorf("send config to init: %w", err))
	}
	if sv.sig.poll() {
		// Cancelled before "go": the target never starts.
		sv.abort(conn)
		return nil
	}
	if err := conn.AwaitHello(sv.sig.c, sv.sig.take); err != nil {
		sv.abort(conn)
		return failAt(protocol.StageInit, err)
	}
	sv.clock.lap("hello")
	if sv.sig.Cancelled {
		sv.abort(conn)
		return nil
	}
	if err := conn.Send(protocol.Go{}); err != nil {
		// The init may have failed its setup (it applies Landlock on
		// its config, before "go") and exited while "go" was on its
		// way: its report is the run's failure, not our broken pipe.
		if f := sv.abortReported(conn); f != nil {
			return f
		}
		return failAt(protocol.StageSpawn, fmt.Errorf("send go to init: %w", err))
	}
	sv.clock.lap("go")
	return nil
}

// configureSlot is configure for a run that took a slot: its config
// (the slot's init was started on /dev/null: the run's stdio comes with
// it) and "go" in one write (initconn.Conn.SendConfigStdioGo). The
// slot's version was checked when it was made, so the last look for a
// cancel before "go" is the one before the write, where a cold run's is
// between its config and "go"; a cancel after it ends the run as one
// after "go" does. The two writes and the look between them were ~10 us
// of every served run's config phase.
func (sv *supervisor) configureSlot(in spawned, r *relay.Relay, cfg *protocol.Config) *setupFailure {
	conn := in.conn
	cfg.Stdio = true
	if sv.sig.poll() {
		// Cancelled before "go": the target never starts.
		r.Handed()
		sv.abort(conn)
		return nil
	}
	err := conn.SendConfigStdioGo(in.slot.configFor(cfg), stdioFDs(stdio(r, sv.opts.Stdio)))
	r.Handed()
	sv.clock.lap("config")
	if err != nil {
		if f := sv.abortReported(conn); f != nil {
			return f
		}
		return failAt(protocol.StageSpawn, fmt.Errorf("send config to init: %w", err))
	}
	return nil
}

// openRelay decides which of the caller's stdout and stderr the jail
// relays (jail/relay) and makes their pipes, before the init is given its
// stdio.
func (sv *supervisor) openRelay() (*relay.Relay, *setupFailure) {
	caller := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	if sv.opts.Stdio != nil {
		caller = [3]*os.File(sv.opts.Stdio)
	}
	r, err := relay.New(caller, sv.plan.Run.StdioBytes)
	if err != nil {
		return nil, failAt(protocol.StageSpawn, err)
	}
	return r, nil
}

// stdio is what the init is given as the analysis' stdio: r's pipes in
// place of the caller's files (given), the caller's other descriptors as
// they are; nil: this process's own 0, 1 and 2.
func stdio(r *relay.Relay, given []*os.File) []*os.File {
	if r != nil {
		return r.Stdio()
	}
	return given
}

// stdioFDs are the descriptors of files (stdio's).
func stdioFDs(files []*os.File) [3]int {
	if files == nil {
		return [3]int{0, 1, 2}
	}
	var fds [3]int
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	return fds
}

// abort ends an init never told "go", keeping the phases of its error.
func (sv *supervisor) abort(conn *initconn.Conn) { sv.clock.add("init", conn.Abort()...) }

// abortReported is abort after a message to the init failed: the setup
// error the init reported before it ended, if it did (nil: none).
func (sv *supervisor) abortReported(conn *initconn.Conn) *setupFailure {
	phases, failed := conn.AbortReported()
	sv.clock.add("init", phases...)
	if failed == nil {
		return nil
	}
	return initFailure(failed)
}

// procAttrIn is the plan's ProcAttr for an init born in leaf (nil: none).
func procAttrIn(p *jail.Plan, leaf *cgroupfs.Leaf) *syscall.SysProcAttr {
	attr := p.ProcAttr()
	if leaf != nil {
		if fd, ok := leaf.FD(); ok {
			// cgroup v2: born inside the leaf, never a moment unlimited.
			attr.UseCgroupFD, attr.CgroupFD = true, fd
		}
	}
	return attr
}
