package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cmd/scidex-jail/internal/earlysig"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// runCmd is `scidex-jail run`. Limits left out come from the profile.
type runCmd struct {
	ID string `name:"id" required:"" help:"Analysis ID: letters, digits, '.', '_', '-' (at most 128). The run directory is <tmp-root>/scidex-analysis-<ID>."`
	jailFlags
	Report  string    `name:"report" placeholder:"FILE" help:"Write the JSON report to FILE (atomically); its directory must exist and be writable, outside every run directory. The one-line summary goes where --summary says; the whole report after it if it cannot be delivered (exit 122)."`
	Summary summaryTo `name:"summary" default:"stderr" placeholder:"stderr|none|fd:N" help:"Where the jail's one-line summary of the run goes: stderr (the default, after the analysis' own stderr), none (read the report instead), or fd:N, an inherited descriptor above 2, so that stderr holds only the analysis' bytes."`
	limitFlags

	Root         string   `name:"root" placeholder:"DIR" help:"The platform's checkout: its data/ and docs/ are readable (read-only) by the analysis. Default: the current directory."`
	Input        []string `name:"input" sep:"none" placeholder:"DIR" help:"An earlier run's collected outputs, readable (read-only) at the same path (repeatable; the post_process profile needs one)."`
	RO           []string `name:"ro" sep:"none" placeholder:"PATH" help:"Another host path readable (read-only) at the same path (repeatable)."`
	RW           []string `name:"rw" sep:"none" placeholder:"PATH" help:"Another host path writable at the same path (repeatable)."`
	Keep         bool     `name:"keep" help:"Keep the run directory afterwards (default: removed)."`
	KeepScratch  bool     `name:"keep-scratch" help:"For debugging: make the analysis' scratch (HOME, TMPDIR, caches) the run directory's .scidex-scratch/, so that it is listed, collected and kept with the outputs (default: never an output, removed with the run)."`
	Collect      string   `name:"collect" placeholder:"DIR" help:"Copy the regular files of the run directory to DIR before it is removed (links are never followed). DIR must be new or empty, outside every run directory and every input."`
	CollectMerge bool     `name:"collect-merge" help:"Let --collect DIR already hold files; one of the same name as an output is an error (delivery_failed), never overwritten."`
	Env          []string `name:"env" sep:"none" placeholder:"K=V" help:"Set an environment variable for the analysis (repeatable). The host's environment is not passed in."`

	Server string `name:"server" placeholder:"SOCKET" help:"Have the resident server listening at SOCKET (scidex-jail serve --socket SOCKET) carry out the run, with the same flags, stdio, report, summary and exit status; a SIGTERM, SIGINT or SIGHUP cancels it there (docs/serve.md)."`

	ReadyFD int `name:"ready-fd" placeholder:"FD" help:"Write one byte to FD (an inherited pipe) and close it as soon as a SIGTERM, SIGINT or SIGHUP to the jail cancels the run with a report; before, one can kill the jail with no report. For callers that may cancel right after the start: wait for the byte (or the jail's exit) before signalling."`

	Degrade []string `name:"allow-degraded" sep:"none" placeholder:"LAYER" help:"Run even if the kernel cannot enforce LAYER in full (landlock); the report lists what was lost."`
	Disable []string `name:"unsafe-disable" sep:"none" placeholder:"LAYER" help:"Turn a protection off (landlock, seccomp, cgroup): for benchmarks and debugging only; recorded in the report."`

	Command []string `arg:"" optional:"" name:"command" help:"The command to run and its arguments, after '--': everything after '--' is passed untouched."`

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
	s, err := r.Resolve(flagOf)
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
		Limits: c.limitFlags.texts(), Net: c.Net,
		Root: c.Root, TmpRoot: c.TmpRoot, CgroupParent: c.CgroupParent,
		Inputs: c.Input, ReadOnly: c.RO, ReadWrite: c.RW, Env: c.Env,
		Keep: c.Keep, KeepScratch: c.KeepScratch, Collect: c.Collect, CollectMerge: c.CollectMerge, Report: c.Report,
		UID: c.UID, GID: c.GID, UIDRange: c.UIDRange,
		AllowDegraded: c.Degrade, UnsafeDisable: c.Disable,
	}
	for _, p := range c.AllowTCP {
		r.AllowTCP = append(r.AllowTCP, uint16(p))
	}
	return r
}

// requestFlags are run's flags by the request field they give, where the
// two names differ by more than '-' for '_'.
var requestFlags = map[string]string{"read_only": "ro", "read_write": "rw", "inputs": "input"}

// flagOf names a request's field as run's command line does (a
// request.Namer): --ro for read_only, --memory for limits.memory.
func flagOf(field string) string {
	if name, ok := strings.CutPrefix(field, "limits."); ok {
		for _, l := range limits.All {
			if l.Field == name {
				return "--" + l.Flag
			}
		}
		return "--" + name
	}
	switch field {
	case "cwd":
		return "the current directory"
	case "command":
		return "the command after '--'"
	}
	if f, ok := requestFlags[field]; ok {
		return "--" + f
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
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
