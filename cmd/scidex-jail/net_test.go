package main

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/seccomp"
)

// The network half of the contract (DESIGN.md, "Network, several layers"):
// an analysis never reaches PostgreSQL, over TCP or its unix socket, in any
// network mode; host mode reaches only the listed ports; loopback mode has
// a working lo of its own; and the report says what was in force.

// netMode is one way of running: its flags and what a TCP connect to a
// host port that is not allowed fails with inside.
type netMode struct {
	name     string
	args     []string
	allow    []uint16 // the ports args open
	tcpErrno int      // connect to 127.0.0.1:5432 (or any port not allowed)
	psqlTCP  string   // psql's words for that failure
}

var netModes = []netMode{
	// No network at all: seccomp refuses the inet socket itself.
	{"none", []string{"--net", "none"}, nil, int(syscall.EAFNOSUPPORT), "Address family not supported by protocol"},
	// Its own namespace with lo up: nothing listens there.
	{"loopback", []string{"--net", "loopback"}, nil, int(syscall.ECONNREFUSED), "Connection refused"},
	// The host's network: Landlock allows connect to 80 and 443 only.
	{"host", []string{"--net", "host", "--allow-tcp", "80,443"}, []uint16{80, 443}, int(syscall.EACCES), "Permission denied"},
}

// netRunProbes runs cases in one jail run with args and wants it to end ok.
func netRunProbes(t *testing.T, args []string, cases []netProbe) (map[string]string, result) {
	t.Helper()
	return netRunProbesIn(t, tmpRoot(t), "net", args, cases)
}

// netRunProbesIn is netRunProbes with the run directory tmp/scidex-analysis-id.
func netRunProbesIn(t *testing.T, tmp, id string, args []string, cases []netProbe) (map[string]string, result) {
	t.Helper()
	full := append([]string{"run", "--id", id, "--tmp-root", tmp}, args...)
	full = append(append(full, "--"), netProbeArgv(t, cases)...)
	r := netRunBounded(t, runOpts{}, full...)
	wantStatus(t, r, report.StatusOK, 0)
	return netProbeResults(t, r.stdout), r
}

// TestNetPostgresUnreachable starts a real PostgreSQL of its own on a free
// port, proves a client on the host reaches it over TCP and over its unix
// sockets, then fails to reach it from inside the jail in every network
// mode, cleanly and fast. The platform's port 5432 and the host's own
// cluster, when one runs (its TCP port and sockets, peer authentication or
// not), are probed the same way and left running.
func TestNetPostgresUnreachable(t *testing.T) {
	requireRoot(t)
	pg := pgStart(t)
	for _, conn := range []string{pg.tcpConn(), pg.sockConn()} {
		if out, err := pgPsqlOutside(conn); err != nil || strings.TrimSpace(out) != "1" {
			t.Fatalf("outside the jail: psql %q -c 'select 1' = %q, %v, want 1, <nil>: the server the test needs is not reachable", conn, out, err)
		}
	}
	hostTCP, hostSockets := pgHostTargets()
	t.Logf("the host's own PostgreSQL: 127.0.0.1:%d answers %v, sockets %v", pgPort, hostTCP, hostSockets)
	sockets := append(append([]string(nil), pg.sockets...), hostSockets...)
	outside := []netProbe{{fmt.Sprintf("tcp %d", pg.port), fmt.Sprintf("tcp(%d)", pg.port), 0}}
	if hostTCP {
		outside = append(outside, netProbe{"host tcp 5432", fmt.Sprintf("tcp(%d)", pgPort), 0})
	}
	for _, s := range sockets {
		outside = append(outside, netProbe{"unix socket " + s, fmt.Sprintf("unix(%q)", s), 0})
	}
	got := netProbeOutside(t, outside)
	netCheckProbes(t, "outside the jail", outside, got, result{})

	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			if netModeRefusedHere(t, m) {
				return
			}
			inside := []netProbe{
				{fmt.Sprintf("tcp %d", pg.port), fmt.Sprintf("tcp(%d)", pg.port), m.tcpErrno},
				// Refused with the same errno whether or not the host
				// listens there: no mode lets an analysis see a
				// difference.
				{"tcp 5432", fmt.Sprintf("tcp(%d)", pgPort), m.tcpErrno},
				{"socket dir", fmt.Sprintf("os.stat(%q) and 0", pgSockDir), int(syscall.ENOENT)},
			}
			for _, s := range sockets {
				inside = append(inside, netProbe{"unix socket " + s, fmt.Sprintf("unix(%q)", s), int(syscall.ENOENT)})
			}
			// The production layout: the run directory in the host's
			// /tmp, next to a socket PostgreSQL may keep there.
			id := fmt.Sprintf("net-pg-%s-%d", m.name, os.Getpid())
			got, r := netRunProbesIn(t, "/tmp", id, m.args, inside)
			netCheckProbes(t, "inside --net "+m.name, inside, got, r)
			netCheckReport(t, r, m.name, m.allow)

			// The real client, with libpq's own error messages.
			script := `"$0" "$1" -X -Atc 'select 1'; echo "tcp-exit=$?"; "$0" "$2" -X -Atc 'select 1'; echo "unix-exit=$?"`
			args := append([]string{"run", "--id", "psql", "--tmp-root", tmpRoot(t)}, m.args...)
			args = append(args, "--", "/bin/sh", "-c", script, pgPsql, pg.tcpConn(), pg.sockConn())
			r = netRunBounded(t, runOpts{}, args...)
			wantStatus(t, r, report.StatusOK, 0)
			for _, w := range []struct{ what, re string }{
				{"exit of psql over TCP", `(?m)^tcp-exit=2$`},
				{"exit of psql over the unix socket", `(?m)^unix-exit=2$`},
				{"psql's TCP error", `127\.0\.0\.1.*` + strconv.Itoa(pg.port) + `.*` + regexp.QuoteMeta(m.psqlTCP)},
				{"psql's socket error", regexp.QuoteMeta(pg.sockets[0]) + `.*No such file or directory`},
			} {
				if !regexp.MustCompile(w.re).MatchString(r.stdout + r.stderr) {
					t.Errorf("inside --net %s: %s does not match %q; %v", m.name, w.what, w.re, r)
				}
			}
		})
	}
}

// TestNetAllowTCPRefused: PostgreSQL's port can never be opened, and
// outbound ports exist only in host mode; both are refused before anything
// runs.
func TestNetAllowTCPRefused(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name string
		args []string
		says string
	}{
		{"5432 in host mode", []string{"--net", "host", "--allow-tcp", "5432"}, "PostgreSQL"},
		{"5432 among others", []string{"--net", "host", "--allow-tcp", "443,5432,80"}, "PostgreSQL"},
		{"ports in none mode", []string{"--net", "none", "--allow-tcp", "443"}, "--net host"},
		{"ports in loopback mode", []string{"--net", "loopback", "--allow-tcp", "443"}, "--net host"},
		{"ports with the default profile", []string{"--allow-tcp", "443"}, "--net host"},
		{"ports with the notebook profile", []string{"--profile", "notebook", "--allow-tcp", "443"}, "--net host"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--id", "refused", "--tmp-root", tmpRoot(t)}, c.args...)
			r := netRunBounded(t, runOpts{}, append(args, "--", "/bin/echo", "target-ran")...)
			if r.code != exitSetup {
				t.Errorf("scidex-jail %v: exit = %d, want %d; %v", c.args, r.code, exitSetup, r)
			}
			if !strings.Contains(r.stderr, c.says) {
				t.Errorf("scidex-jail %v: stderr = %q, want it to name %q", c.args, r.stderr, c.says)
			}
			if strings.Contains(r.stdout, "target-ran") {
				t.Errorf("scidex-jail %v: the target ran; it must not start", c.args)
			}
		})
	}
}

// TestNetHostAllowedPorts: in host mode the listed port is reached and
// answers; any other port, an MPTCP socket (which Landlock's TCP rules do
// not see) and listening are refused.
func TestNetHostAllowedPorts(t *testing.T) {
	requireRoot(t)
	a := netGreeter(t, "hello-from-A\n")
	b := netGreeter(t, "hello-from-B\n")
	outside := []netProbe{{"port B outside", fmt.Sprintf("tcp(%d, b'hello-from-B\\n')", b), 0}}
	netCheckProbes(t, "outside the jail", outside, netProbeOutside(t, outside), result{})

	cases := []netProbe{
		{"allowed port A", fmt.Sprintf("tcp(%d, b'hello-from-A\\n')", a), 0},
		{"other port B", fmt.Sprintf("tcp(%d)", b), int(syscall.EACCES)},
		{"postgres port", fmt.Sprintf("tcp(%d)", pgPort), int(syscall.EACCES)},
		{"MPTCP socket", "sock(socket.AF_INET, socket.SOCK_STREAM, 262)", int(syscall.EPROTONOSUPPORT)},
		{"MPTCP socket v6", "sock(socket.AF_INET6, socket.SOCK_STREAM, 262)", int(syscall.EPROTONOSUPPORT)},
		{"listen on TCP", "bind_tcp()", int(syscall.EACCES)},
	}
	got, r := netRunProbes(t, []string{"--net", "host", "--allow-tcp", strconv.Itoa(a)}, cases)
	netCheckProbes(t, "inside --net host", cases, got, r)
	netCheckReport(t, r, "host", []uint16{uint16(a)})
	for _, rule := range r.report.Enforced.Landlock.Rules {
		if rule == "tcp-connect "+strconv.Itoa(b) || rule == "tcp-connect "+strconv.Itoa(pgPort) {
			t.Errorf("report landlock rules hold %q; only tcp-connect %d was asked for", rule, a)
		}
	}
}

// TestNetLoopback: in loopback mode a server and its client in one run talk
// over 127.0.0.1 (a notebook and its kernel), and the host's loopback is
// not that one; in none mode there is no inet socket at all.
func TestNetLoopback(t *testing.T) {
	requireRoot(t)
	host := netGreeter(t, "host-service\n")
	// /sys is not mounted: lo's state is shown by what works.
	noSys := netProbe{"no /sys/class/net", "os.stat('/sys/class/net') and 0", int(syscall.ENOENT)}
	cases := []struct {
		name  string
		args  []string
		net   string
		tests []netProbe
	}{
		{"loopback", []string{"--net", "loopback"}, "loopback", []netProbe{
			{"server and client inside", "loop()", 0},
			{"host loopback service", fmt.Sprintf("tcp(%d)", host), int(syscall.ECONNREFUSED)},
			noSys,
		}},
		{"notebook profile", []string{"--profile", "notebook"}, "loopback", []netProbe{
			{"server and client inside", "loop()", 0},
			{"host loopback service", fmt.Sprintf("tcp(%d)", host), int(syscall.ECONNREFUSED)},
		}},
		{"none", []string{"--net", "none"}, "none", []netProbe{
			{"server and client inside", "loop()", int(syscall.EAFNOSUPPORT)},
			{"inet socket", "sock(socket.AF_INET, socket.SOCK_STREAM)", int(syscall.EAFNOSUPPORT)},
			{"inet6 socket", "sock(socket.AF_INET6, socket.SOCK_STREAM)", int(syscall.EAFNOSUPPORT)},
			{"udp socket", "sock(socket.AF_INET, socket.SOCK_DGRAM)", int(syscall.EAFNOSUPPORT)},
			{"netlink route", "sock(socket.AF_NETLINK, socket.SOCK_RAW, 0)", int(syscall.EAFNOSUPPORT)},
			noSys,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, r := netRunProbes(t, c.args, c.tests)
			netCheckProbes(t, "inside "+strings.Join(c.args, " "), c.tests, got, r)
			netCheckReport(t, r, c.net, nil)
		})
	}
}

// netGreeter listens on a free 127.0.0.1 port of the host and writes greeting
// to every connection, until the test ends.
func netGreeter(t *testing.T, greeting string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(greeting))
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// netCheckReport checks what the report says was in force for the network.
func netCheckReport(t *testing.T, r result, mode string, allow []uint16) {
	t.Helper()
	e := r.report.Enforced
	if e.Net != mode {
		t.Errorf("report enforced.net = %q, want %q", e.Net, mode)
	}
	if !slices.Equal(e.AllowTCP, allow) && (len(e.AllowTCP) != 0 || len(allow) != 0) {
		t.Errorf("report enforced.allow_tcp = %v, want %v", e.AllowTCP, allow)
	}
	if got, want := slices.Contains(e.Namespaces, "net"), mode != "host"; got != want {
		t.Errorf("report enforced.namespaces = %v: holds net = %v, want %v in %s mode", e.Namespaces, got, want, mode)
	}
	if len(e.Degraded) != 0 {
		t.Errorf("report enforced.degraded = %v, want none", e.Degraded)
	}
	if e.Seccomp == nil {
		t.Errorf("report enforced.seccomp = null, want the default policy")
	} else {
		row, err := netmode.Lookup(netmode.Name(mode))
		if err != nil {
			t.Fatalf("netmode.Lookup(%s): %v", mode, err)
		}
		prog, err := seccomp.Lookup(seccomp.Policy{Name: "default", Net: row.Seccomp})
		if err != nil {
			t.Fatalf("seccomp.Lookup(default/%s): %v", mode, err)
		}
		if want := "default/" + mode; e.Seccomp.Policy != want {
			t.Errorf("report seccomp policy = %q, want %q", e.Seccomp.Policy, want)
		}
		if e.Seccomp.SHA256 != prog.SHA256 || e.Seccomp.Arch != prog.Arch {
			t.Errorf("report seccomp sha256, arch = %s, %s, want %s, %s (the embedded program)", e.Seccomp.SHA256, e.Seccomp.Arch, prog.SHA256, prog.Arch)
		}
	}
	if e.Landlock == nil {
		t.Fatalf("report enforced.landlock = null, want the run's rules")
	}
	var tcp []string
	for _, rule := range e.Landlock.Rules {
		if strings.HasPrefix(rule, "tcp-") {
			tcp = append(tcp, rule)
		}
	}
	var want []string
	for _, p := range allow {
		want = append(want, "tcp-connect "+strconv.Itoa(int(p)))
	}
	if mode == "host" {
		if len(allow) == 0 {
			want = []string{"tcp-connect none"}
		}
		// Nothing inside may listen on the host's network.
		want = append(want, "tcp-bind none")
	}
	if !slices.Equal(tcp, want) {
		t.Errorf("report landlock tcp rules = %q, want %q", tcp, want)
	}
}
