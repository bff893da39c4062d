package jail

import (
	"github.com/scidex/scidex-jail/jail/internal/initproc"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// IsInit reports whether argv asks for the init. main checks it before
// parsing any flags.
func IsInit(args []string) bool { return len(args) > 1 && args[1] == protocol.InitArg }

// InitMain is the re-executed init: PID 1 of the run's namespaces
// (package jail/internal/initproc). It never returns.
func InitMain() { initproc.Main() }
