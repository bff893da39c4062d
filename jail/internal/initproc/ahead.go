package initproc

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/netif"
	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// A slot's view, built ahead of its run (protocol.Config.View).
//
// Everything of the view that the run's request does not decide is built
// while the slot waits: the CPUs pinned, the whole mount view (system
// directories, /etc's files, data dirs, /dev, /proc, the limits' files,
// the run directory's budget tmpfs, the scratch) with the run directory
// at a placeholder beside its place, the pivot into it, lo up; then the
// main thread, which forks the target, is confined as setupSteps confine
// it for a cold run: identity, Landlock (the run directory's rule on the
// placeholder, protocol.ViewOf), every fd close-on-exec, seccomp, and
// checked (confined). The run's config then only names the run directory
// (a mount move: the tmpfs, its links and the scratch beside it are the
// ones built, and its Landlock rule, on the tmpfs's inode, moves with
// it), writes the meminfo of the run's limits into the file already
// bound over /proc/meminfo, seals the root read-only, sets the hostname
// and hands the network mode's sockets: all from the helper's thread
// (helper.go), which is not confined. Only the init runs in the
// namespace until then: the writable root and the open meminfo file are
// the init's alone. The run's config is its own part only
// (protocol.RunPart), and the init checks that it asks for the view it
// built (the supervisor's digests of the view it sent and of the run's,
// identity and policies included, agree) before it completes it and
// names anything.

// heldView is what a view built ahead keeps for its run.
type heldView struct {
	view     *protocol.Config        // the view as sent
	online   string                  // the CPUs pinned (found.CPUs)
	meminfo  int                     // the meminfo file bound over /proc/meminfo, open for the run's content; -1: none
	landlock *protocol.LandlockFound // what the slot's Landlock found (found.Landlock)
	helper   *helper                 // the unconfined thread that does the run's privileged steps
	sum      string                  // the view's digest, the supervisor's (protocol.Config.ViewSum), which the run's part must name
}

// buildAhead builds the view cfg of a slot's init, confines its main
// thread and says Ready, with the phases it took (the slot's, not a
// run's). nil: a step failed, and the init reported it.
func (c *conn) buildAhead(cfg *protocol.Config, slot bool) *heldView {
	if !slot {
		c.fail(protocol.StageConfig, errors.New("bug: a view ahead of its run sent to an init that is no slot's"), protocol.ExitSetup)
		return nil
	}
	c.lap(string(protocol.StageConfig))
	if cfg.ViewSum == "" {
		c.fail(protocol.StageConfig, errors.New("bug: a slot's view without its digest"), protocol.ExitSetup)
		return nil
	}
	h := &heldView{view: cfg, meminfo: -1, sum: cfg.ViewSum}
	found := &protocol.Started{}
	for _, s := range []step{
		{protocol.StageCPUs, func() (err error) {
			h.online, err = pinCPUs(cfg.CPUs)
			return err
		}},
		{protocol.StageMounts, func() error { return buildMountView(&cfg.Mounts, h.online, h) }},
		{protocol.StageNetwork, func() error {
			if cfg.Loopback {
				return netif.LoopbackUp()
			}
			return nil
		}},
		// Before the main thread is confined: the helper's thread is
		// made while no thread of the init is.
		{protocol.StageIdentity, func() error {
			base, err := threadStatus()
			if err != nil {
				return err
			}
			h.helper, err = startHelper(base)
			return err
		}},
	} {
		if !c.runStep(s) {
			return nil
		}
	}
	if !c.runSteps(confineSteps(cfg, found)) {
		return nil
	}
	// The check a cold run makes before its fork, made now: nothing
	// changes this thread's credentials, domain or filter from here on
	// (only it could, and it runs only the main goroutine: reading the
	// run's config, waiting for "go", forking), and the helper changes
	// nothing of its own thread (mounts, hostname and sockets are the
	// namespaces', not a thread's).
	if !c.runStep(step{protocol.StageExec, func() error {
		return confined(cfg.UID, cfg.GID, cfg.Groups, cfg.Security.Seccomp != nil)
	}}) {
		return nil
	}
	h.landlock = found.Landlock
	c.send(&protocol.Ready{Phases: c.phases})
	c.phases = nil
	return h
}

// setUp is the run's setup on the view built and confined: the run
// directory named and the network mode's sockets handed over (stage
// mounts: lo is the view's, up, and the name service's socket was made
// with it; the run's sockets are made and handed now, sockets.go), the
// hostname, and the fds made close-on-exec again (the run's stdio and
// sockets came since). It runs on the helper's thread (helper.go), which
// the run's whole setup up to "go" runs on (conn.setUp): the main thread
// was confined in the slot, and its identity, Landlock and seccomp are no
// steps of the run, nor its phases (the slot's Ready has them). false: a
// step failed, and the init reported it.
func (h *heldView) setUp(c *conn, cfg *protocol.Config, found *protocol.Started) bool {
	found.CPUs, found.Landlock = h.online, h.landlock
	return c.runSteps([]step{
		{protocol.StageMounts, func() error {
			if err := h.finish(cfg); err != nil {
				return err
			}
			return handSockets(cfg.Sockets)
		}},
		{protocol.StageHostname, func() error { return unix.Sethostname([]byte(cfg.Hostname)) }},
		{protocol.StageFDs, closeOnExec},
	})
}

// complete is the run's whole config from its part (protocol.RunPart),
// which must ask for the view built.
func (h *heldView) complete(part *protocol.Config) (*protocol.Config, error) {
	if part.ViewSum != h.sum {
		return nil, errors.New("bug: the run's config asks for another view than the one its slot built")
	}
	return protocol.Complete(h.view, part), nil
}

// finish completes the view for the run cfg, from inside it: the run
// directory moved from its placeholder to its name, the meminfo written,
// the root made read-only.
func (h *heldView) finish(cfg *protocol.Config) error {
	from, to := h.view.Mounts.RunDir, cfg.Mounts.RunDir
	if err := mkdirAll(to); err != nil {
		return wrap.Error("create mount point "+to, err)
	}
	if err := unix.Mount(from, to, "", unix.MS_MOVE, ""); err != nil {
		return wrap.Error("move the run directory from "+from+" to "+to, err)
	}
	if err := unix.Rmdir(from); err != nil {
		return wrap.Error("remove "+from, err)
	}
	if h.meminfo >= 0 {
		err := writeAll(h.meminfo, cfg.Mounts.Meminfo)
		// Closed before the root is sealed: a file open for writing
		// keeps a mount from becoming read-only (EBUSY).
		if cerr := unix.Close(h.meminfo); err == nil && cerr != nil {
			err = cerr
		}
		h.meminfo = -1
		if err != nil {
			return wrap.Error("write the run's /proc/meminfo", err)
		}
	}
	return sealRoot()
}

// writeAll writes text to fd.
func writeAll(fd int, text string) error {
	for b := []byte(text); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
