// Package childmode is the one registry of the jail's child modes: the
// processes the jail starts from a program of its own, to do a job that
// must not happen in the process that starts them. One marker selects a
// mode: the child's argv[0], set by whoever starts it, read first thing by
// the program's main. Each mode is a row:
//
//	mode   argv[0]            program                 started by               talks over
//	Init   scidex-jail-init   cmd/scidex-jail-init    jail: Run, CheckInit     the sync socket, fd 3
//	                          (jail/initmain)         (the opened file)        (jail/internal/protocol)
//	Probe  scidex-jail-probe  cmd/scidex-jail itself  jail/hostcheck:          its config on stdin,
//	                          (/proc/self/exe)        ProbeSecurity            its findings on stdout
//
// argv[0] rather than a flag or the environment: it is set before the
// child's first instruction, with nothing for a command-line parser to
// read or the environment to leak into what the child starts; ps shows it
// as what the process is; and a person typing a command gives a path or
// a program name as argv[0], never these (a program started as
// "scidex-jail-probe" only confines itself and reports).
//
// The marker selects; it authorises nothing. The init is trusted for
// what the supervisor checks, not for its name: the file is opened once,
// must be root's and writable by nobody else when the jail runs as root
// (jail/initconn.Open), the opened file is what runs, and it gets its config
// and "go" only after its first message states the supervisor's own
// build version (the hello handshake, package protocol). It also refuses
// to run as anything but PID 1 of new namespaces.
//
// It imports nothing, so that the init program, the supervisor and the
// command line may all use it (.ci/layering). Usage (the package's
// Example, compiled with its tests):
//
//	// the child's main, first thing
//	if childmode.Of(os.Args) == childmode.Probe {
//		os.Exit(probe())
//	}
//	// the parent
//	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: childmode.Probe.Argv()}
package childmode

// Mode is a child mode; its value is the argv[0] that selects it.
type Mode string

const (
	// Init is PID 1 of a run's namespaces: it builds the view, confines
	// itself, execs the analysis and reaps it (jail/internal/initproc).
	Init Mode = "scidex-jail-init"
	// Probe is `scidex-jail check`'s child: it applies the plan's
	// Landlock and seccomp policies to itself, which cannot be undone,
	// tries that each denies what it should, and reports
	// (jail/hostcheck's SecurityChild).
	Probe Mode = "scidex-jail-probe"
)

// modes is every mode: the registry.
var modes = []Mode{Init, Probe}

// Modes returns every child mode (a fresh slice).
func Modes() []Mode { return append([]Mode(nil), modes...) }

// Of returns the mode that argv (a process's os.Args) selects, or "" when
// it selects none: a command line a person or a script typed.
func Of(argv []string) Mode {
	if len(argv) == 0 {
		return ""
	}
	for _, m := range modes {
		if argv[0] == string(m) {
			return m
		}
	}
	return ""
}

// Argv is the argv that starts a child in mode m: its marker, then args.
func (m Mode) Argv(args ...string) []string {
	return append([]string{string(m)}, args...)
}
