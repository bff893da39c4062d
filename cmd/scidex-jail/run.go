package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cmd/scidex-jail/internal/earlysig"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
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

// spec is the run the command line asks for, resolved in this process's
// directory.
func (c *runCmd) spec() (*jail.Spec, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, bad("cannot read the current directory: %w", err)
	}
	if len(c.Command) > 0 {
		return nil, bad("%q given before '--': put the command after '--', e.g. scidex-jail run --id %s -- %s", c.Command[0], c.ID, c.Command[0])
	}
	r := c.request(cwd)
	s, err := r.Resolve(option.Flag)
	if err != nil {
		return nil, err
	}
	s.Started = started
	// supervise.Run validates it, once.
	return s, nil
}

// request is the run this command line asks for, with relative paths
// from cwd: the one place run's flags become a request's fields.
func (c *runCmd) request(cwd string) request.Request {
	r := request.Request{
		ID: c.ID, Command: c.afterDash, Cwd: cwd, Profile: c.Profile, Config: c.Config,
		Limits: c.limitFlags.texts(), Net: c.Net, AllowHosts: c.AllowHost, AllowRanges: c.AllowRange,
		Root: c.Root, TmpRoot: c.TmpRoot, CgroupParent: c.CgroupParent,
		Inputs: c.Input, ReadOnly: c.RO, ReadWrite: c.RW, Env: c.Env,
		Keep: c.Keep, KeepScratch: c.KeepScratch, Collect: c.Collect, CollectMerge: c.CollectMerge, Report: c.Report,
		UID: c.UID, GID: c.GID, UIDRange: c.UIDRange,
	}
	for _, p := range c.AllowTCP {
		r.AllowTCP = append(r.AllowTCP, uint16(p))
	}
	for _, d := range c.Degrade {
		r.AllowDegraded = append(r.AllowDegraded, string(d.Protection))
	}
	for _, d := range c.Disable {
		r.UnsafeDisable = append(r.UnsafeDisable, string(d.Protection))
	}
	return r
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
