package jail

import (
	"time"

	"github.com/scidex/scidex-jail/jail/internal/initproc"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// IsInit reports whether argv asks for the init. main checks it before
// parsing any flags.
func IsInit(args []string) bool { return len(args) > 1 && args[1] == protocol.InitArg }

// InitMain is the re-executed init: PID 1 of the run's namespaces
// (package jail/internal/initproc). It never returns.
func InitMain() { initproc.Main() }

// ProcessStart is when the calling process started, as the kernel accounts
// for its main thread (protocol.ProcessStart): call it first thing in main
// and pass it to Run as Spec.Started, so that the report's startup phase
// covers the process's start, its runtime and the parsing of its flags.
func ProcessStart() time.Time { return protocol.ProcessStart() }
