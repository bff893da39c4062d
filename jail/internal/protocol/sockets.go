package protocol

import (
	"errors"
	"os"
	"strconv"
)

// Sockets (config) and the init's Sockets message: the sockets a network
// mode's supervisor-side work needs inside the run's network namespace
// (the egress mode's DNS stub, port listeners and proxy). The init makes
// them there, in its network stage (lo up, before it drops its
// capabilities: port 53 is privileged), and hands the descriptors to the
// supervisor over the sync socket (SCM_RIGHTS, with one "sockets"
// message), then closes its own copies. No socket path exists in the view,
// and the analysis, forked after, inherits none of them.
//
//	supervisor                                  init
//	    |-- Config{sockets: {dns, ports, proxy}} ->|
//	    |                                          |  network: lo up, then
//	    |                                          |  socket, bind, listen
//	    |<-- {kind:"sockets", n} + n descriptors --|  (SCM_RIGHTS), closed here
//	    |  serves them from the host's namespace   |
//	    |<-- {kind:"started"} ---------------------|
//
// The descriptors come in the config's order: the DNS socket (if DNS),
// one listener per port of Ports, the proxy's (if Proxy is not 0), and
// last the name service's unix listener at NamesSocket (if Mounts.Names).

// NamesSocket is where the C library (glibc) looks for its name service
// cache daemon (nscd) before any other lookup of a name or a user: a
// unix socket of the view, whose other end is the supervisor.
const NamesSocket = "/var/run/nscd/socket"

// Sockets are what the init makes for the supervisor in the run's
// network namespace.
type Sockets struct {
	// DNS: a UDP socket bound to 127.0.0.1:53, for a DNS stub.
	DNS bool `json:"dns,omitempty"`
	// Ports: a TCP listener on 0.0.0.0:<port> for each, catching
	// connections to any local address (the stub's fake ones) on it.
	Ports []int `json:"ports,omitempty"`
	// Proxy: a TCP listener on 127.0.0.1:<Proxy>, for an HTTP proxy; 0:
	// none.
	Proxy int `json:"proxy,omitempty"`
}

// Count is how many descriptors the init hands over for s, with the
// name service's when names is set.
func (s *Sockets) Count(names bool) int {
	n := 0
	if names {
		n++
	}
	if s == nil {
		return n
	}
	n += len(s.Ports)
	if s.DNS {
		n++
	}
	if s.Proxy != 0 {
		n++
	}
	return n
}

// SocketsMade is the init's message that the sockets of the config are
// made: N descriptors came with its line, in the config's order. Files
// are those descriptors as the supervisor received them (initconn fills
// it in; they are not on the wire).
type SocketsMade struct {
	N     int        `json:"n"`
	Files []*os.File `json:"-"`
}

// KindSockets is SocketsMade's kind.
const KindSockets Kind = "sockets"

func (*SocketsMade) Kind() Kind { return KindSockets }

func (m *SocketsMade) encode(w *writer) { w.int("n", int64(m.N)) }

func (m *SocketsMade) field(r *reader, key string) (err error) {
	if key != "n" {
		return unknownField(key)
	}
	m.N, err = r.int(`"n"`)
	return err
}

// maxSockets bounds N: a DNS socket, a proxy, and a listener per port.
const maxSockets = 65537

func checkSocketsMade(m *SocketsMade) error {
	if m.N < 0 || m.N > maxSockets {
		return errors.New("n " + strconv.Itoa(m.N) + ", want 0 to " + strconv.Itoa(maxSockets))
	}
	return nil
}

func (s *Sockets) encode(w *writer) {
	if s.DNS {
		w.bool("dns", true)
	}
	if len(s.Ports) > 0 {
		w.key("ports")
		w.b = appendInts(w.b, s.Ports)
	}
	if s.Proxy != 0 {
		w.int("proxy", int64(s.Proxy))
	}
}

func (s *Sockets) field(r *reader, key string) (err error) {
	into := `"` + key + `"`
	switch key {
	case "dns":
		s.DNS, err = r.boolean(into)
	case "ports":
		s.Ports, err = readInts(r, into)
		s.Ports = nilIfEmpty(s.Ports)
		for _, p := range s.Ports {
			if err == nil && (p < 1 || p > 65535) {
				err = errors.New("port " + strconv.Itoa(p) + " in " + into + ", want 1 to 65535")
			}
		}
	case "proxy":
		s.Proxy, err = r.int(into)
		if err == nil && (s.Proxy < 0 || s.Proxy > 65535) {
			err = errors.New("port " + strconv.Itoa(s.Proxy) + " in " + into + ", want 1 to 65535")
		}
	default:
		err = unknownField(key)
	}
	return err
}
