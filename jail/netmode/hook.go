package netmode

import (
	"context"
	"os"

	"github.com/scidex/scidex-jail/jail/egress"
)

// Hook is the supervisor's side of a network mode that needs one: the
// egress mode's runs jail/egress's engine (egress.go), the none mode's its
// name service (names.go); loopback and host have none. Its contract,
// which jail (the plan) and jail/supervise (the run) keep:
//
//   - the plan asks Init what the init and the view need (the sockets the
//     init makes in the run's network namespace, the environment, the
//     view's resolv.conf) and puts it in the init's config;
//   - the supervisor calls Start once the run is planned, before the init
//     is started; a Start that fails is the run's setup failure;
//   - the init makes the sockets in its network stage and hands their
//     descriptors to the supervisor over its connection, which passes them
//     to Serve (in Init's order: the DNS socket, the ports' listeners, the
//     proxy's) before the analysis runs;
//   - the supervisor calls Stop when the run is over, before its cleanup
//     and its report, whatever the outcome (Serve or not): nothing of the
//     session runs after it.
type Hook interface {
	Init(run Run) InitSide
	Start(ctx context.Context, run Run) (Session, error)
}

// Run is what a hook is told of the run it serves: the values of the
// run's spec that its mode takes (Mode.Hosts), checked.
type Run struct {
	ID      string
	Policy  egress.Policy  // the allowed hosts and ranges
	Budgets egress.Budgets // zero fields: egress.DefaultBudgets'
}

// InitSide is what a hook needs of the init and the view.
type InitSide struct {
	// The sockets the init makes in the run's network namespace and hands
	// over: a UDP socket on 127.0.0.1:53 (DNS), a TCP listener on
	// 0.0.0.0:<port> for each of Ports, one on 127.0.0.1:<Proxy> (0: none).
	DNS   bool
	Ports []uint16
	Proxy uint16
	// Env is added to the analysis' environment, under the caller's.
	Env []string
	// ResolvConf is the view's /etc/resolv.conf ("": the host's, as
	// other modes).
	ResolvConf string
	// Names: a unix listener at the C library's name service socket in
	// the view (protocol.NamesSocket), handed over last.
	Names bool
}

// Session is one run's supervisor-side work of a mode.
type Session interface {
	// Serve serves the descriptors the init handed over, in InitSide's
	// order; the session owns them from then on (closed at Stop, or now
	// on an error).
	Serve(files []*os.File) error
	// Stop ends the session's work and releases what it holds.
	Stop() Stopped
}

// Stopped is what a session leaves for the report.
type Stopped struct {
	// Notes are for the report's completion notes (none: nothing to say).
	Notes []string
	// Egress is the egress engine's log; nil for a session of another
	// kind.
	Egress *egress.Log
}
