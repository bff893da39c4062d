package supervise

import (
	"fmt"
	"os"
	"syscall"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// The steps of execute (run.go), in order: each carries out its part of
// the plan and returns the stage and error of a failure, recording what it
// made in the supervisor's resources.

// create makes the run's cgroup leaf, as planned.
func (sv *supervisor) create() *setupFailure {
	leaf, warnings, err := createLeaf(sv.plan.Cgroup, sv.plan.Run.TmpRoot)
	sv.warnings = append(sv.warnings, warnings...)
	if err != nil {
		return failAt(protocol.StageCgroup, err)
	}
	if leaf != nil {
		sv.res.leaf, sv.res.cgroup = leaf, leafReport(leaf)
	}
	sv.clock.lap("cgroup")
	return nil
}

// spawn starts the init from prog, born in the leaf.
func (sv *supervisor) spawn(prog *initconn.Program) *setupFailure {
	conn, sp, err := initconn.Start(prog, sv.res.leaf, sv.sysProcAttr(), sv.stdio())
	sv.relay.handed()
	sv.res.spawner = sp
	if err != nil {
		if initconn.IsEnterError(err) {
			return failAt(protocol.StageCgroup, err)
		}
		return failAt(protocol.StageSpawn, err)
	}
	sv.conn = conn
	sv.clock.lap("spawn")
	return nil
}

// makeRunDir sweeps what dead jails left and makes the run directory. An
// error (the ID in use) means the run cannot begin: the init, never told
// anything, and the leaf are ended first, so nothing is left.
func (sv *supervisor) makeRunDir() (*setupFailure, error) {
	p := &sv.plan.Run
	sv.warnings = append(sv.warnings, runfiles.SweepLeftovers(p.TmpRoot, p.Report)...)
	sv.clock.lap("sweep")
	var leased func(uint32) bool
	if sv.spec.LeasedFrom != "" {
		leased = func(owner uint32) bool { return sv.spec.LeaseRange().Contains(uint64(owner)) }
	}
	dir, stale, err := runfiles.CreateDirLeased(p.TmpRoot, p.ID, p.Owner[0], p.Owner[1], leased)
	if err != nil {
		sv.conn.Abort()
		closeLeaf(sv.res.leaf, sv.res.spawner, sv.conn)
		sv.res.leaf = nil
		return nil, err
	}
	sv.res.dir = dir
	if dir.Path() != sv.plan.Init.RunDir {
		sv.clock.add("init", sv.conn.Abort()...)
		return failAt(protocol.StageRunDir, fmt.Errorf("bug: run directory %s, planned %s", dir.Path(), sv.plan.Init.RunDir)), nil
	}
	if stale {
		sv.warnings = append(sv.warnings, "removed a leftover run directory of a dead earlier run with this ID")
	}
	sv.clock.lap("rundir")
	return nil, nil
}

// configure sends the init its config and "go". A cancel that arrived
// meanwhile ends the init before "go", with no failure.
func (sv *supervisor) configure() *setupFailure {
	cfg, err := sv.withLimits(sv.plan.Init)
	if err != nil {
		sv.abort()
		return failAt(protocol.StageMeminfo, err)
	}
	if sv.slot != nil {
		// The slot's init was started on /dev/null: the run's stdio
		// comes with its config.
		cfg.Stdio = true
		err = sv.conn.SendConfigStdio(&cfg, sv.stdioFDs())
		sv.relay.handed()
	} else {
		err = sv.conn.SendConfig(&cfg)
	}
	sv.clock.lap("config")
	if err != nil {
		// An init that is gone before reading its config: one that is
		// no init of ours says so first.
		if herr := sv.conn.AwaitHello(sv.sig.c, sv.sig.take); herr != nil {
			err = herr
		}
		if f := sv.abortReported(); f != nil {
			return f
		}
		if _, ok := err.(*initconn.InitError); ok {
			return failAt(protocol.StageInit, err)
		}
		return failAt(protocol.StageSpawn, fmt.Errorf("send config to init: %w", err))
	}
	if sv.sig.poll() {
		// Cancelled before "go": the target never starts.
		sv.abort()
		return nil
	}
	if err := sv.conn.AwaitHello(sv.sig.c, sv.sig.take); err != nil {
		sv.abort()
		return failAt(protocol.StageInit, err)
	}
	sv.clock.lap("hello")
	if sv.sig.Cancelled {
		sv.abort()
		return nil
	}
	if err := sv.conn.Send(protocol.Go{}); err != nil {
		// The init may have failed its setup (it applies Landlock on
		// its config, before "go") and exited while "go" was on its
		// way: its report is the run's failure, not our broken pipe.
		if f := sv.abortReported(); f != nil {
			return f
		}
		return failAt(protocol.StageSpawn, fmt.Errorf("send go to init: %w", err))
	}
	sv.clock.lap("go")
	return nil
}

// openRelay decides which of the caller's stdout and stderr the jail
// relays (relay.go) and makes their pipes, before the init is given its
// stdio.
func (sv *supervisor) openRelay() *setupFailure {
	caller := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	if sv.opts.Stdio != nil {
		caller = [3]*os.File(sv.opts.Stdio)
	}
	r, err := newRelay(caller, sv.plan.Run.StdioBytes)
	if err != nil {
		return failAt(protocol.StageSpawn, err)
	}
	sv.relay, sv.relayDecided = r, true
	return nil
}

// stdio is what the init is given as the analysis' stdio: the relay's
// pipes in place of the caller's files, the caller's other descriptors
// as they are; nil: this process's own 0, 1 and 2.
func (sv *supervisor) stdio() []*os.File {
	if sv.relay != nil {
		return sv.relay.stdio[:]
	}
	return sv.opts.Stdio
}

// stdioFDs are the descriptors of stdio.
func (sv *supervisor) stdioFDs() [3]int {
	files := sv.stdio()
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
func (sv *supervisor) abort() { sv.clock.add("init", sv.conn.Abort()...) }

// abortReported is abort after a message to the init failed: the setup
// error the init reported before it ended, if it did (nil: none).
func (sv *supervisor) abortReported() *setupFailure {
	phases, failed := sv.conn.AbortReported()
	sv.clock.add("init", phases...)
	if failed == nil {
		return nil
	}
	return initFailure(failed)
}

func (sv *supervisor) sysProcAttr() *syscall.SysProcAttr { return procAttrIn(sv.plan, sv.res.leaf) }

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
