package rules

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/unix"
)

// errnoFor evaluates the rule table in Go: the errno of the first group
// with a matching rule for syscall sys and args, or 0 when allowed.
func errnoFor(groups []Group, sys string, args [6]uint64) unix.Errno {
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Syscall != sys {
				continue
			}
			match := true
			for _, c := range r.Conds {
				if !c.Matches(args[c.Arg]) {
					match = false
				}
			}
			if match {
				return g.Errno
			}
		}
	}
	return 0
}

func mustGroups(t *testing.T, net string) []Group {
	t.Helper()
	g, err := Groups("default", net)
	if err != nil {
		t.Fatalf("Groups(default, %s) = %v", net, err)
	}
	return g
}

// values returns edge cases plus a random sample of 32-bit values, with and
// without garbage in the high half.
func values() []uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	vs := []uint64{0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff}
	for i := 0; i < 256; i++ {
		vs = append(vs, uint64(i))
	}
	for i := 0; i < 20000; i++ {
		vs = append(vs, uint64(r.Uint32()))
	}
	n := len(vs)
	for _, v := range vs[:n] {
		vs = append(vs, v|uint64(r.Uint32()|1)<<32)
	}
	return vs
}

func TestPersonalityOnlyLinuxAndQuery(t *testing.T) {
	groups := mustGroups(t, NetNone)
	for _, v := range values() {
		low := uint32(v)
		want := unix.EPERM
		if low == 0 || low == 0xffffffff {
			want = 0
		}
		if got := errnoFor(groups, "personality", [6]uint64{v}); got != want {
			t.Errorf("personality(%#x) = %v, want %v", v, got, want)
		}
	}
}

func TestSocketFamilies(t *testing.T) {
	allowed := map[string]map[uint32]bool{
		NetNone: {unix.AF_UNIX: true},
		NetInet: {unix.AF_UNIX: true, unix.AF_INET: true, unix.AF_INET6: true, unix.AF_NETLINK: true},
	}
	for _, net := range Nets {
		groups := mustGroups(t, net)
		for _, v := range values() {
			want := unix.EAFNOSUPPORT
			if allowed[net][uint32(v)] {
				want = 0
			}
			if got := errnoFor(groups, "socket", [6]uint64{v, unix.SOCK_STREAM}); got != want {
				t.Errorf("%s: socket(%#x, SOCK_STREAM, 0) = %v, want %v", net, v, got, want)
			}
			want = unix.EAFNOSUPPORT
			if uint32(v) == unix.AF_UNIX {
				want = 0
			}
			if got := errnoFor(groups, "socketpair", [6]uint64{v, unix.SOCK_STREAM}); got != want {
				t.Errorf("%s: socketpair(%#x, SOCK_STREAM, 0) = %v, want %v", net, v, got, want)
			}
		}
	}
}

func TestNetlinkRouteOnly(t *testing.T) {
	groups := mustGroups(t, NetInet)
	for _, v := range values() {
		want := unix.EAFNOSUPPORT
		if uint32(v) == unix.NETLINK_ROUTE {
			want = 0
		}
		if got := errnoFor(groups, "socket", [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, v}); got != want {
			t.Errorf("socket(AF_NETLINK, SOCK_RAW, %#x) = %v, want %v", v, got, want)
		}
	}
}

func TestCloneNamespaceFlags(t *testing.T) {
	const newFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
	groups := mustGroups(t, NetNone)
	for _, v := range values() {
		want := unix.Errno(0)
		if v&newFlags != 0 {
			want = unix.EPERM
		}
		if got := errnoFor(groups, "clone", [6]uint64{v}); got != want {
			t.Errorf("clone(%#x) = %v, want %v", v, got, want)
		}
	}
}

func TestGroupsErrors(t *testing.T) {
	tests := []struct{ name, policy, net string }{
		{"unknown policy", "strict", NetNone},
		{"unknown net", "default", "wifi"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if _, err := Groups(tt.policy, tt.net); err == nil {
			t.Errorf("%s: Groups(%q, %q) = nil error, want an error", tt.name, tt.policy, tt.net)
		}
	}
}

// TestHeads: Heads is Groups without the rules, in the same order, and
// Check, Heads and Groups agree on which policies exist.
func TestHeads(t *testing.T) {
	for _, name := range append([]string{"nosuch"}, Names...) {
		for _, net := range append([]string{"nosuch"}, Nets...) {
			groups, gerr := Groups(name, net)
			heads, herr := Heads(name, net)
			cerr := Check(name, net)
			if (gerr == nil) != (herr == nil) || (gerr == nil) != (cerr == nil) {
				t.Fatalf("Groups(%s, %s), Heads, Check = %v, %v, %v, want the same verdict", name, net, gerr, herr, cerr)
			}
			if gerr != nil {
				if gerr.Error() != herr.Error() || gerr.Error() != cerr.Error() {
					t.Errorf("Groups(%s, %s), Heads, Check = %q, %q, %q, want one message", name, net, gerr, herr, cerr)
				}
				continue
			}
			if len(heads) != len(groups) {
				t.Fatalf("Heads(%s, %s) = %d heads, want %d (one per group)", name, net, len(heads), len(groups))
			}
			for i, g := range groups {
				if want := (Head{g.Summary, g.Errno}); heads[i] != want {
					t.Errorf("Heads(%s, %s)[%d] = %+v, want %+v", name, net, i, heads[i], want)
				}
			}
		}
	}
}

// TestQuoted: the lists in messages read as fmt's %q wrote them.
func TestQuoted(t *testing.T) {
	for _, l := range [][]string{nil, Names, Nets, {"a\"b", "ü\n"}} {
		if got, want := Quoted(l), fmt.Sprintf("%q", l); got != want {
			t.Errorf("Quoted(%#v) = %s, want %s", l, got, want)
		}
	}
}

// TestPrlimitOfOthers: a new limit for another process is refused, a read
// of one and one's own limits are not.
func TestPrlimitOfOthers(t *testing.T) {
	groups := mustGroups(t, NetNone)
	const p = 0x7ffd1234 // some pointer
	tests := []struct {
		name string
		args [6]uint64
		want unix.Errno
	}{
		{"set pid 1", [6]uint64{1, unix.RLIMIT_NOFILE, p, 0}, unix.EPERM},
		{"set and read pid 1", [6]uint64{1, unix.RLIMIT_CPU, p, p}, unix.EPERM},
		{"set a high pid", [6]uint64{4194304, unix.RLIMIT_CPU, p, 0}, unix.EPERM},
		{"set pid 0 with garbage above", [6]uint64{1 << 32, unix.RLIMIT_CPU, p, 0}, unix.EPERM},
		{"read pid 1", [6]uint64{1, unix.RLIMIT_NOFILE, 0, p}, 0},
		{"set own", [6]uint64{0, unix.RLIMIT_NOFILE, p, 0}, 0},
		{"read own", [6]uint64{0, unix.RLIMIT_NOFILE, 0, p}, 0},
	}
	for _, tt := range tests {
		if got := errnoFor(groups, "prlimit64", tt.args); got != tt.want {
			t.Errorf("%s: prlimit64%v = %v, want %v", tt.name, tt.args, got, tt.want)
		}
	}
}
