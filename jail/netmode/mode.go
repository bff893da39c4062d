package netmode

import (
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
	// Hosts: the mode takes allowed host names and address ranges
	// (CheckHosts), which its Hook enforces; no other mode has a use for
	// them.
	Hosts bool
	// Hook is the supervisor's side of the mode (hook.go), nil when it has
	// none.
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

// CheckHosts refuses n allowed hosts or ranges for a mode that takes
// none; nil when the mode takes them or none are given.
func (m Mode) CheckHosts(n int) *PortsError {
	if n > 0 && !m.Hosts {
		return &PortsError{Mode: m.Name, Takers: HostTakers(), What: "no name is reached"}
	}
	return nil
}

// HostTakers are the modes that take allowed hosts.
func HostTakers() []Name {
	var out []Name
	for _, m := range All {
		if m.Hosts {
			out = append(out, m.Name)
		}
	}
	return out
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

// PortsError is allowed TCP ports (or hosts: CheckHosts) given for a mode
// that takes none.
type PortsError struct {
	Mode   Name
	Takers []Name // the modes that take them
	What   string // why they mean nothing in Mode; "": there is no outside network to reach
}

func (e *PortsError) Error() string { return "allowed TCP ports " + e.Needs("the network mode") }

// Needs says what the ports need, naming the network option as the user
// wrote it (the flag, the profile field): `needs --net host (in none mode
// there is no outside network to reach)`.
func (e *PortsError) Needs(netOption string) string {
	what := e.What
	if what == "" {
		what = "there is no outside network to reach"
	}
	return "needs " + netOption + " " + Choices(e.Takers) + " (in " + string(e.Mode) + " mode " + what + ")"
}
