package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/scidex/scidex-jail/jail"
)

type runCmd struct {
	ID      string        `name:"id" required:"" help:"Analysis ID: letters, digits, '.', '_', '-' (at most 128). The run directory is <tmp-root>/scidex-analysis-<ID>."`
	Report  string        `name:"report" placeholder:"FILE" help:"Write the JSON report to FILE (atomically). Without it the report goes nowhere; the one-line summary still goes to stderr."`
	Timeout time.Duration `name:"timeout" default:"30m" help:"Wall-clock budget (e.g. 90s, 30m, 1.5s; 0 = none). On expiry the analysis gets SIGTERM, then after --grace every process is killed."`
	Grace   time.Duration `name:"grace" default:"5s" help:"Time between SIGTERM and SIGKILL on timeout or cancel."`
	Keep    bool          `name:"keep" help:"Keep the run directory afterwards (default: removed)."`
	Collect string        `name:"collect" placeholder:"DIR" help:"Copy the regular files of the run directory to DIR before it is removed (links are never followed)."`
	TmpRoot string        `name:"tmp-root" default:"/tmp" placeholder:"DIR" help:"Absolute directory that holds the run directory."`
	Env     []string      `name:"env" placeholder:"K=V" help:"Set an environment variable for the analysis (repeatable). The host's environment is not passed in."`
	UID     int           `name:"uid" default:"65534" help:"Host uid the analysis runs as when scidex-jail runs as root (never 0)."`
	GID     int           `name:"gid" default:"65534" help:"Host gid the analysis runs as when scidex-jail runs as root (never 0)."`

	Command []string `arg:"" optional:"" name:"command" help:"The command to run and its arguments, after '--': everything after '--' is passed untouched."`

	// afterDash is what followed the first "--" on the command line, cut
	// off before kong saw the rest.
	afterDash []string
}

func (c *runCmd) spec() (*jail.Spec, error) {
	s := &jail.Spec{
		ID:      c.ID,
		Command: c.Command,
		Env:     c.Env,
		TmpRoot: c.TmpRoot,
		Timeout: c.Timeout,
		Grace:   c.Grace,
		Keep:    c.Keep,
		HostUID: c.UID,
		HostGID: c.GID,
	}
	if len(c.Command) > 0 {
		return nil, fmt.Errorf("%w: %q given before '--': put the command after '--', e.g. scidex-jail run --id %s -- %s", jail.ErrBadSpec, c.Command[0], c.ID, c.Command[0])
	}
	s.Command = c.afterDash
	if c.Collect != "" {
		abs, err := filepath.Abs(c.Collect)
		if err != nil {
			return nil, fmt.Errorf("%w: --collect %q: %w", jail.ErrBadSpec, c.Collect, err)
		}
		s.Collect = abs
	}
	if c.Report != "" {
		if fi, err := os.Stat(filepath.Dir(c.Report)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: --report %q: its directory does not exist; create it or choose another path", jail.ErrBadSpec, c.Report)
		}
	}
	return s, s.Validate()
}

func (c *runCmd) Run() error {
	s, err := c.spec()
	if err != nil {
		return err
	}
	rep, err := jail.Run(s)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, rep.Summary())
	if c.Report != "" {
		if err := rep.WriteFile(c.Report); err != nil {
			fmt.Fprintf(os.Stderr, "scidex-jail: %v\n", err)
			if rep.ExitCode == 0 {
				return exitError{exitSetup}
			}
		}
	}
	return exitError{rep.ExitCode}
}
