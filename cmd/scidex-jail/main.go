// Command scidex-jail runs one untrusted analysis in a fresh sandbox and
// reports how it ended. The README is its manual (install, first run,
// flags, limits, exit codes, the report, troubleshooting by stage);
// docs/ holds the security model, deploying and performance.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"golang.org/x/sys/unix"

	// First among the imports of this binary's own code: its init
	// registers the signals a run handles, before anything else runs.
	"github.com/scidex/scidex-jail/cmd/scidex-jail/internal/earlysig"
	"github.com/scidex/scidex-jail/internal/buildversion"
	"github.com/scidex/scidex-jail/jail/childmode"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// exitSetup is the status when the jail fails before the target runs (as in
// env(1), nohup(1) and docker run).
const exitSetup = 125

type cli struct {
	Run      runCmd      `cmd:"" help:"Run a command as an analysis inside the jail: run --id ID [flags] -- CMD [ARG...]"`
	Profiles profilesCmd `cmd:"" help:"Print the effective profiles (built-in and from the profiles file)."`
	Check    checkCmd    `cmd:"" help:"Check what this host can enforce for a profile, and how to fix what it cannot."`
	GC       gcCmd       `cmd:"" name:"gc" help:"Remove what killed jails left behind (run directories, temporary reports, cgroup leaves): only what provably belongs to a dead jail."`
	Serve    serveCmd    `cmd:"" help:"Run analyses on request, as a long-lived server: JSON lines on stdin/stdout or a unix socket, inits prepared ahead (docs/serve.md)."`
	Version  versionCmd  `cmd:"" help:"Print the version."`
	Schema   schemaCmd   `cmd:"" help:"Print the JSON Schema (draft 2020-12) of the report, whose version is the report's schema field."`

	// Made from this grammar at build time (make deb): the manual page
	// and the bash completion.
	Man        manCmd        `cmd:"" hidden:"" help:"Print the manual page (roff), made from this command line's help."`
	Completion completionCmd `cmd:"" hidden:"" help:"Print a shell completion script."`
}

type versionCmd struct{}

func (versionCmd) Run() error {
	fmt.Println("scidex-jail", buildversion.Version)
	return nil
}

// exitError carries a status out of Run without os.Exit below main.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// started is when this process started, as the kernel accounts for it:
// the report's startup phase runs from it to the run's first step.
var started time.Time

func main() {
	// One P: the supervisor mostly waits, on the init, the kernel and its
	// signals, and runs one step at a time. With a second P the runtime
	// starts another thread to spin for work each time a goroutine is
	// made ready (a message, a reaped child, a signal): 4-5% of a run's
	// CPU for no wall time (docs/performance.md).
	runtime.GOMAXPROCS(1)
	// A child mode of this binary (jail/childmode) is selected by its
	// argv[0], before any of the command line's work.
	if childmode.Of(os.Args) == childmode.Probe {
		earlysig.Release()
		os.Exit(probeChild())
	}
	started = supervise.ProcessStart()
	if err := ensureStdio(); err != nil {
		fmt.Fprintf(os.Stderr, "scidex-jail: %v\n", err)
		os.Exit(exitSetup)
	}
	if err := closeInheritedOnExec(); err != nil {
		fmt.Fprintf(os.Stderr, "scidex-jail: %v\n", err)
		os.Exit(exitSetup)
	}
	os.Exit(realMain(os.Args[1:]))
}

// ensureStdio opens /dev/null on any of fds 0-2 our caller left closed.
// Otherwise the first file we open (the tmp-root, a lock, a socket) would
// take that number and be handed on as the analysis' stdin or stdout.
func ensureStdio() error {
	for fd := 0; fd <= 2; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			continue
		}
		nfd, err := unix.Open("/dev/null", unix.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("open /dev/null for closed fd %d: %w", fd, err)
		}
		if nfd != fd {
			// A lower fd was closed too and got it; the loop fixes that one
			// first, so this cannot happen.
			return fmt.Errorf("bug: /dev/null opened as fd %d, want %d", nfd, fd)
		}
	}
	return nil
}

// closeInheritedOnExec marks every descriptor above 2 close-on-exec, so
// that what our caller leaked to us (a secret opened as fd 7 by a shell, a
// server's listening socket) reaches no init: a run's PID 1 and a server's
// slot inits are execed with the files they are passed and nothing else.
// Close-on-exec, not close: the descriptors the command line names for our
// own use (--summary fd:N, --ready-fd) stay usable here, and none of them
// is for a child either. Go opens its own files close-on-exec; the files
// an exec passes on (exec.Cmd.ExtraFiles, syscall.ProcAttr.Files) are
// dup'ed to their new numbers without the flag.
func closeInheritedOnExec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if err != unix.ENOSYS && err != unix.EINVAL {
		return fmt.Errorf("mark inherited descriptors close-on-exec: close_range: %w", err)
	}
	// Before Linux 5.11 (ENOSYS; 5.9 and 5.10 have close_range without
	// CLOSE_RANGE_CLOEXEC, EINVAL): one at a time.
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: list them: %w", err)
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The directory's own fd is closed by now: EBADF.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return fmt.Errorf("mark inherited descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}

func realMain(args []string) int {
	var c cli
	args, c.Run.afterDash = cutDash(args)
	ctx, err := parse(&c, args)
	if err == nil {
		if !strings.HasPrefix(ctx.Command(), "run") && ctx.Command() != "serve" {
			// Only a run handles signals; the rest act on them as any
			// program does.
			earlysig.Release()
		}
		err = ctx.Run()
	}
	return exitStatus(os.Stderr, err)
}

// cutDash splits the command line at the first "--": everything after it
// is the target's argv, untouched. Kong never sees it, so no flag of the
// target can be taken for one of ours or the other way round.
func cutDash(args []string) (ours, target []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}

// errHelpShown ends the parse once --help has printed the help: kong stops
// at the first error of its help printer, so nothing after the help runs.
var errHelpShown = errors.New("help shown")

// parse reads args into c. Every way out of kong is an error it returns:
// a bad command line, errHelpShown, or the status kong asked to exit with.
// Tests add options (kong.Writers).
func parse(c *cli, args []string, opts ...kong.Option) (*kong.Context, error) {
	p, err := newParser(c, args, opts...)
	if err != nil {
		return nil, err
	}
	return p.parse(args)
}

// parser is kong's model of a cli (see commandGrammar), bound to its
// fields, with the status kong asked to exit with.
type parser struct {
	k    *kong.Kong
	exit int
}

// newParser builds kong's model of c for a command line that starts as
// args does.
func newParser(c *cli, args []string, opts ...kong.Option) (*parser, error) {
	p := &parser{}
	c.Run.withTable()
	grammar, only := commandGrammar(c, args)
	options := []kong.Option{
		kong.Name("scidex-jail"),
		kong.Description("Run untrusted scientific analyses in a sandbox: namespaces, Landlock, seccomp, cgroup limits, one JSON report."),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		netHelp(), // flags.go
		kong.Help(func(o kong.HelpOptions, ctx *kong.Context) error {
			if err := kong.DefaultHelpPrinter(o, ctx); err != nil {
				return err
			}
			return errHelpShown
		}),
		kong.Exit(func(code int) {
			if p.exit < 0 {
				p.exit = code
			}
		}),
	}
	k, err := kong.New(grammar, append(append(options, only...), opts...)...)
	if err != nil {
		return nil, fmt.Errorf("bug: building the command line: %w", err)
	}
	rowHelp(k.Model.Node)
	p.k = k
	return p, nil
}

// parse reads args into the cli the parser was built on. Kong sets every
// flag of the model to its default before it reads args (Context.Reset),
// so a parser can read one command line after another.
func (p *parser) parse(args []string) (*kong.Context, error) {
	// Kong exits only after its help or version flags, and this grammar
	// has no version flag and its help printer fails with errHelpShown
	// first; should it exit anyway, the status is kept, not acted on here.
	p.exit = -1
	ctx, err := p.k.Parse(args)
	switch {
	case p.exit == 0:
		return nil, errHelpShown
	case p.exit > 0:
		return nil, exitError{exitSetup}
	}
	return ctx, err
}

// commandGrammar is what kong builds its model from. Building the model
// is most of kong's cost at startup (it reads every struct tag and
// interpolates every help text; with the parse, 0.7 ms for the whole cli
// and 0.45 ms for run alone on a small machine), so a command line that starts with a visible command's name gets
// a grammar of that command alone, from the same field of c; any other
// (help, the hidden commands that print the whole model, a typo) gets all
// of c.
func commandGrammar(c *cli, args []string) (any, []kong.Option) {
	if len(args) == 0 {
		return c, nil
	}
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name := f.Tag.Get("name")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if _, hidden := f.Tag.Lookup("hidden"); name == args[0] && !hidden {
			return &struct{}{}, []kong.Option{kong.DynamicCommand(name, f.Tag.Get("help"), "", v.Field(i).Addr().Interface())}
		}
	}
	return c, nil
}

// exitStatus is the status for the outcome of a command, whose error (if
// it is not a status of its own) it writes to w.
func exitStatus(w io.Writer, err error) int {
	var ee exitError
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return 0
	case errors.As(err, &ee):
		return ee.code
	}
	fmt.Fprintf(w, "scidex-jail: %v\n", err)
	// Printed as any other, with an exit status of its own: run
	// --server's run the server accepted and never answered.
	if errors.As(err, new(runLost)) {
		return exitLost
	}
	return exitSetup
}
