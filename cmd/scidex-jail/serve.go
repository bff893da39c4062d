package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cmd/scidex-jail/internal/earlysig"
	"github.com/scidex/scidex-jail/internal/buildversion"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/server"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// serveCmd is `scidex-jail serve` (docs/serve.md).
type serveCmd struct {
	Socket       string        `name:"socket" placeholder:"PATH" help:"Listen on a unix socket made at PATH (mode 0600; connections from this uid and root only) instead of JSON lines on stdin/stdout."`
	MaxRuns      int           `name:"max-runs" placeholder:"N" help:"Runs at once; more wait in the queue. Default: the number of CPUs."`
	Queue        int           `name:"queue" default:"64" placeholder:"N" help:"Requests waiting for a run place; beyond, a request is refused with the reason."`
	Slots        int           `name:"slots" default:"2" placeholder:"N" help:"Slots (inits prepared ahead, each used once) kept ready per slot profile; 0: every run starts cold."`
	SlotProfiles []string      `name:"slot-profile" sep:"none" placeholder:"NAME" help:"A profile slots are prepared for (repeatable). Default: default."`
	SlotIdle     time.Duration `name:"slot-idle" default:"5m" placeholder:"DURATION" help:"A slot unused this long is destroyed and made anew."`
	SlotCgroup   string        `name:"cgroup-parent" placeholder:"PATH" help:"Delegated cgroup the slots' leaves go below; a request takes a slot when it gives the same --cgroup-parent. Default: the server's own cgroup."`
	SlotDisable  []string      `name:"unsafe-disable" sep:"none" placeholder:"LAYER" help:"Make the slots with a protection off (landlock, seccomp, cgroup), as run's --unsafe-disable: a request takes a slot when it turns off the same layers. cgroup: slots without a cgroup leaf, for a host (rootless on cgroup v1) where none can be made."`
	ReplyTimeout time.Duration `name:"reply-timeout" default:"30s" placeholder:"DURATION" help:"How long a reply may wait for its client to read it; a client that has not read it by then is dropped, its runs cancelled, and its replies logged on stderr."`
	// The slots' ids: each slot leases its own from --uid-range when it is
	// made, and a request that fixes none takes one; a request takes a
	// slot of fixed ids when its --uid and --gid are the server's.
	idFlags
	configFlag
}

func (c *serveCmd) Run() error {
	if c.MaxRuns == 0 {
		c.MaxRuns = runtime.NumCPU()
	}
	switch {
	case c.MaxRuns < 0:
		return bad("--max-runs %d: give at least 1", c.MaxRuns)
	case c.Queue < 0:
		return bad("--queue %d: give 0 or more", c.Queue)
	case c.Slots < 0:
		return bad("--slots %d: give 0 or more", c.Slots)
	case c.SlotIdle <= 0:
		return bad("--slot-idle %v: give a positive duration, e.g. 5m", c.SlotIdle)
	case c.ReplyTimeout <= 0:
		return bad("--reply-timeout %v: give a positive duration, e.g. 30s", c.ReplyTimeout)
	}
	// The one P main set stays: the server's runs mostly wait on the
	// kernel, which hands the P on; a second P made a served run of
	// true 1 ms slower (its cleanup 1.8 ms against 0.8), its threads
	// spinning for work at every wake-up.
	templates, err := c.templates()
	if err != nil {
		return err
	}
	// The socket first: its mode comes from a umask set around its
	// bind, which nothing else of ours may meet (the pool makes cgroup
	// directories as soon as the server exists).
	var l *net.UnixListener
	if c.Socket != "" {
		if l, err = server.Listen(c.Socket); err != nil {
			return bad("--socket %w", err)
		}
	}
	logf := func(s string) { fmt.Fprintf(os.Stderr, "scidex-jail serve: %s\n", s) }
	srv := server.New(server.Config{MaxRuns: c.MaxRuns, Queue: c.Queue, Version: buildversion.Version,
		ReplyWait: c.ReplyTimeout, Log: logf,
		Pool: server.PoolConfig{Templates: templates, PerTemplate: c.Slots, Idle: c.SlotIdle, Warn: logf}})
	served := make(chan struct{})
	if l != nil {
		go func() { srv.ServeSocket(l); close(served) }()
	} else {
		go func() { srv.Serve(stdin(), stdout()); close(served) }()
	}
	for done := false; !done; {
		select {
		case s := <-earlysig.C:
			done = s == syscall.SIGTERM || s == syscall.SIGINT || s == syscall.SIGHUP
		case <-served:
			done = true
		}
	}
	if l != nil {
		l.Close()
	}
	srv.Shutdown()
	return nil
}

// stdout is where replies go: a socket (the caller's socketpair end,
// most often the one stdin is too) through a net.Conn, which waits when
// the socket is full and whose writes the server bounds (a deadline).
// Reading stdin through a net.Conn makes the socket non-blocking, for
// stdout as well when they are one; a plain write to it then failed with
// EAGAIN once the client fell behind, and the reply was lost
// (TestServeSlowReader). Anything else (a pipe, a file) is written as it
// is.
func stdout() io.Writer {
	if isSocket(os.Stdout) {
		if fc, err := net.FileConn(os.Stdout); err == nil {
			return fc
		}
	}
	return os.Stdout
}

// stdin is what requests come on: a unix socket (a socketpair end the
// caller made, over which descriptors can come) or a plain stream.
func stdin() io.Reader {
	if isSocket(os.Stdin) {
		if fc, err := net.FileConn(os.Stdin); err == nil {
			if uc, ok := fc.(*net.UnixConn); ok {
				return uc
			}
			fc.Close()
		}
	}
	return os.Stdin
}

// isSocket says whether f is a socket. Only a socket is handed to
// net.FileConn: it makes the file non-blocking before it looks at what it
// is, and a pipe left so (the flag is the open file's, shared with the
// os.File) failed its next read with EAGAIN as soon as the client paused,
// which ended the server with exit 0 (TestServeStdioLongLine).
func isSocket(f *os.File) bool {
	var st unix.Stat_t
	return unix.Fstat(int(f.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK
}

// templates are the slot profiles' runs: a request naming the profile
// and the slot settings, as a client's naming only its profile would be.
// Each is resolved and checked here, so that what `run` refuses with
// these settings (a host uid of 0, a cgroup parent that is not there) is
// refused now, with run's message, not warned at every slot and run cold.
func (c *serveCmd) templates() ([]request.Request, error) {
	names := c.SlotProfiles
	if len(names) == 0 {
		names = []string{request.DefaultProfile}
	}
	var out []request.Request
	for _, n := range names {
		// The leaves are scidex-slot-<pid>-<random>: whose they are.
		r := request.Request{ID: "slot-" + strconv.Itoa(os.Getpid()), Profile: n, Config: c.Config, Cwd: "/", Command: []string{"/usr/bin/true"},
			CgroupParent: c.SlotCgroup, UnsafeDisable: c.SlotDisable, UID: c.UID, GID: c.GID, UIDRange: c.UIDRange}
		s, err := r.Resolve(option.Flag) // serve's flags are run's
		if err == nil {
			err = supervise.CheckSlot(s)
		}
		switch {
		case errors.Is(err, jail.ErrBadSpec):
			return nil, fmt.Errorf("--slot-profile %s: %w", n, err)
		case err != nil: // the host cannot hold the slot: exit 125 all the same
			return nil, bad("--slot-profile %s: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}
