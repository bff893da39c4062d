package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cmd/scidex-jail/internal/earlysig"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// runCmd is `scidex-jail run`. Limits left out come from the profile.
type runCmd struct {
	ID string `name:"id" required:""`
	jailFlags
	Report  string    `name:"report"`
	Summary summaryTo `name:"summary" default:"stderr" placeholder:"stderr|none|fd:N" help:"Where the jail's one-line summary of the run goes: stderr (the default, after the analysis' own stderr), none (read the report instead), or fd:N, an inherited descriptor above 2, so that stderr holds only the analysis' bytes."`
	limitFlags

	Root         string   `name:"root"`
	Input        []string `name:"input" sep:"none"`
	RO           []string `name:"ro" sep:"none"`
	RW           []string `name:"rw" sep:"none"`
	Keep         bool     `name:"keep"`
	KeepScratch  bool     `name:"keep-scratch"`
	Collect      string   `name:"collect"`
	CollectMerge bool     `name:"collect-merge"`
	Env          []string `name:"env" sep:"none"`

	Server string `name:"server" placeholder:"SOCKET" help:"Have the resident server listening at SOCKET (scidex-jail serve --socket SOCKET) carry out the run, with the same flags, stdio, report, summary and exit status; a SIGTERM, SIGINT or SIGHUP cancels it there (docs/serve.md)."`

	ReadyFD int `name:"ready-fd" placeholder:"FD" help:"Write one byte to FD (an inherited pipe) and close it as soon as a SIGTERM, SIGINT or SIGHUP to the jail cancels the run with a report; before, one can kill the jail with no report. For callers that may cancel right after the start: wait for the byte (or the jail's exit) before signalling."`

	Degrade []degradeFlag `name:"allow-degraded" sep:"none"`
	Disable []disableFlag `name:"unsafe-disable" sep:"none"`

	Command []string `arg:"" optional:"" name:"command"`

	// afterDash is what followed the first "--" on the command line, cut
	// off before kong saw the rest.
	afterDash []string
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{jail.ErrBadSpec}, args...)...)
}

// spec resolves the profile, then the flags over it, into a validated Spec.
func (c *runCmd) spec() (*jail.Spec, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, bad("cannot read the current directory: %w", err)
	}
	return c.specIn(cwd)
}

// specIn is spec with relative paths taken from cwd (serve: the request's).
func (c *runCmd) specIn(cwd string) (*jail.Spec, error) {
	p, _, err := c.profile()
	if err != nil {
		return nil, err
	}
	if len(c.Command) > 0 {
		return nil, bad("%q given before '--': put the command after '--', e.g. scidex-jail run --id %s -- %s", c.Command[0], c.ID, c.Command[0])
	}
	// Not filepath.Join: it would clean "a/../b" lexically, where the
	// jail resolves paths as the kernel walks them (links first).
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return strings.TrimRight(cwd, "/") + "/" + p
	}
	// Everything the profile decides, then the run's own.
	spec := p.Spec()
	s := &spec
	s.ID, s.Command = c.ID, c.afterDash
	s.Env = append(s.Env, c.Env...)
	s.TmpRoot, s.Root, s.CgroupParent = c.TmpRoot, abs(c.Root), c.CgroupParent
	s.Keep, s.KeepScratch, s.Collect, s.CollectMerge, s.Report = c.Keep, c.KeepScratch, abs(c.Collect), c.CollectMerge, abs(c.Report)
	if s.HostUID, s.HostGID, s.UIDRange, err = c.ids(); err != nil {
		return nil, err
	}
	s.OptIns = append(s.OptIns, optIns(c.Degrade, c.Disable)...)
	s.Started = started
	if s.Root == "" {
		s.Root = cwd
	}
	// The profile's paths too, made absolute as the flags' are.
	s.ReadOnly, s.ReadWrite = nil, nil
	for _, l := range []struct {
		dst  *[]string
		from []string
	}{{&s.ReadOnly, p.ReadOnly}, {&s.ReadOnly, c.Input}, {&s.ReadOnly, c.RO}, {&s.ReadWrite, p.ReadWrite}, {&s.ReadWrite, c.RW}} {
		for _, path := range l.from {
			*l.dst = append(*l.dst, abs(path))
		}
	}
	if p.RequireInput && len(c.Input) == 0 {
		return nil, bad("profile %s reads earlier outputs: give them with --input DIR (e.g. a --collect directory of an earlier run)", p.Name)
	}
	c.limitFlags.apply(s)
	s.From = c.origin(p, s.From)
	// supervise.Run validates it, once.
	return s, nil
}

func (c *runCmd) Run() error {
	if c.Server != "" {
		return c.runVia() // client.go
	}
	// First: from here on (earlysig registered in its package init, before
	// main) a cancel gives a report.
	if c.ReadyFD != 0 {
		if err := ready(c.ReadyFD); err != nil {
			return err
		}
	}
	summary, err := c.Summary.open()
	if err != nil {
		return err
	}
	s, err := c.spec()
	if err != nil {
		return err
	}
	rep, err := supervise.Run(s, earlysig.C)
	if err != nil {
		return err
	}
	tell(summary, rep)
	return exitError{rep.ExitCode}
}

// tell writes the summary line where --summary says; with a report that
// may not have reached --report at all (delivery_failed), the report in
// full after it, on stderr when no summary was asked for.
func tell(summary io.Writer, rep *report.Report) {
	var msg []byte
	if summary != nil {
		msg = []byte(rep.Summary() + "\n")
	}
	if rep.Status == report.StatusDeliveryFailed {
		b, _ := json.MarshalIndent(rep, "", "  ")
		msg = append(msg, append(b, '\n')...)
		if summary == nil {
			summary = os.Stderr
		}
	}
	if len(msg) > 0 {
		say(summary, msg, stderrWait)
	}
}

// ready writes the --ready-fd byte and closes fd, so that neither the init
// nor the analysis inherits it and the caller reads end of file after the
// byte.
func ready(fd int) error {
	if fd <= 2 {
		return bad("--ready-fd %d: give a descriptor above 2 (an inherited pipe), not standard input, output or error", fd)
	}
	_, err := unix.Write(fd, []byte{'r'})
	unix.Close(fd)
	if err != nil {
		return bad("--ready-fd %d: write the ready byte: %w; pass the write end of a pipe the jail inherits", fd, err)
	}
	return nil
}
