package netmode

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/seccomp"
)

// Name is a network mode's name, as a run is given it: the command line's
// --net, a profile's net, a request's net. A run's spec carries the name;
// the row is looked up where it is used (Lookup).
type Name string

// Mode is one row: everything the jail does differently in a network mode.
type Mode struct {
	Name  Name
	Help  string // for --net's help: "no network"
	Means string // what the network promise means in it (the promise's text, check's line)
	Doc   string // docs/security.md's line (MarkdownTable), markdown

	// OwnNamespace gives the run a network namespace of its own; false
	// leaves it in the host's.
	OwnNamespace bool
	// Loopback brings lo up in that namespace (the init's network stage).
	Loopback bool
	// Seccomp is the filter's network policy: which sockets the run may
	// make. The filter knows no mode; it takes this value.
	Seccomp seccomp.Net
	// TCPPorts applies Landlock's TCP rules: connect only to the run's
	// allowed TCP ports, bind none. Only such a mode takes allowed ports
	// (CheckPorts): in the others the namespace is the fence, and loopback
	// servers (a notebook's kernel) need bind, which the rules deny.
	TCPPorts bool
	// Resolver has the host view look at the host's resolver (the target
	// of /etc/resolv.conf) and bind it read-only where /etc does not: only
	// a mode with a way out has a resolver to reach.
	Resolver bool
	// Env is what the mode adds to the analysis' environment (before the
	// caller's, which wins): a proxy's address, for example.
	Env []string
	// Layers are the layers that can hold each promise that depends on the
	// network (promise.NetPromises), in this mode.
	Layers map[promise.Promise][]promise.Layer
	// Hook is the supervisor's side of the mode, nil when it has none (every
	// mode today; a run of a mode with one is refused until the supervisor
	// runs hooks).
	Hook Hook
}

// Network is what the mode gives the promises.
func (m Mode) Network() promise.Network {
	return promise.Network{Mode: string(m.Name), Means: m.Means, Layers: m.Layers}
}

// Networks are every mode's promise.Network: what a profile's
// require_layers is bounded by (promise.ValidateRequireLayers).
func Networks() []promise.Network {
	out := make([]promise.Network, len(All))
	for i, m := range All {
		out[i] = m.Network()
	}
	return out
}

// Names are the modes' names, in the table's order.
func Names() []Name {
	out := make([]Name, len(All))
	for i, m := range All {
		out[i] = m.Name
	}
	return out
}

// Lookup is the row of the mode named n. An unknown name ("" too: a
// run's spec fills in Default before it asks) is an *UnknownError listing
// the table's names.
func Lookup(n Name) (Mode, error) {
	for _, m := range All {
		if m.Name == n {
			return m, nil
		}
	}
	return Mode{}, &UnknownError{Name: n}
}

// CheckPorts refuses allowed TCP ports for a mode that takes none; nil
// when the mode takes them or none are given.
func (m Mode) CheckPorts(ports []uint16) *PortsError {
	if len(ports) > 0 && !m.TCPPorts {
		return &PortsError{Mode: m.Name, Takers: Takers()}
	}
	return nil
}

// Takers are the modes that take allowed TCP ports.
func Takers() []Name {
	var out []Name
	for _, m := range All {
		if m.TCPPorts {
			out = append(out, m.Name)
		}
	}
	return out
}

// Choices is the list of names for a message: "none, loopback or host".
func Choices(names []Name) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Help is the --net flag's help, from the rows: "Network: none (no
// network), loopback (...), host (...)."
func Help() string {
	s := make([]string, len(All))
	for i, m := range All {
		s[i] = string(m.Name) + " (" + m.Help + ")"
	}
	return "Network: " + strings.Join(s, ", ") + "."
}

// UnknownError is a network mode no row has.
type UnknownError struct{ Name Name }

// Error is the value and the choices; the caller puts the name the user
// wrote in front: `--net "internet": choose none, loopback or host`.
func (e *UnknownError) Error() string {
	return strconv.Quote(string(e.Name)) + ": choose " + Choices(Names())
}

// PortsError is allowed TCP ports given for a mode that takes none.
type PortsError struct {
	Mode   Name
	Takers []Name // the modes that take them
}

func (e *PortsError) Error() string { return "allowed TCP ports " + e.Needs("the network mode") }

// Needs says what the ports need, naming the network option as the user
// wrote it (the flag, the profile field): `needs --net host (in none mode
// there is no outside network to reach)`.
func (e *PortsError) Needs(netOption string) string {
	return "needs " + netOption + " " + Choices(e.Takers) + " (in " + string(e.Mode) + " mode there is no outside network to reach)"
}

// Hook is the supervisor's side of a network mode that needs one (nil for
// none, loopback and host; the egress mode of issue #35 will be the
// first). Its contract: the supervisor calls Start once the run is
// planned and before the init runs, hands the init the session's Files
// with its config, and calls Stop at the run's end, after the init is gone
// and before the report is written, whatever the outcome. The supervisor
// does not call it yet: until the first mode with a hook wires it, the
// plan refuses a mode that has one (fail closed: a mode without its own
// side is not the mode).
type Hook interface {
	Start(ctx context.Context, run Run) (Session, error)
}

// Run is what a hook is told of the run it serves.
type Run struct {
	ID     string // the run's id
	RunDir string // the run directory on the host
}

// Session is one run's supervisor-side work of a mode: a DNS stub or a
// proxy, for example, reached through descriptors the init gets (it makes
// its listeners inside the run's network namespace and hands them back
// over one of them, so that no socket path is seen in the view).
type Session interface {
	// Files are handed to the init with its config, in order. The session
	// keeps its own copies; the supervisor closes these once sent.
	Files() []*os.File
	// Stop ends the session's work and releases what it holds; what it
	// returns is for the report's completion notes (empty: nothing to say).
	Stop() (notes []string, err error)
}
