package landlock

import (
	"errors"
	"strconv"
)

// Policy is what the sandboxed process may touch. It is a plain value: build
// it, print it, compare it; Restrict applies it.
//
// Paths must be absolute and exist. A path may be a directory (the rule
// covers the whole tree below it) or a single file; symbolic links are
// followed, so the rule covers the link's target. Rules add up: a path below
// two entries gets the rights of both.
type Policy struct {
	ReadExec  []string // read files, list directories, execute (system dirs: /usr, /lib, ...)
	ReadOnly  []string // read files, list directories; no execute (data/, docs/)
	ReadWrite []string // every filesystem right except device nodes and ioctl, including execute
	Devices   []string // device files (or a device directory like /dev/pts): read, write, ioctl

	HandleTCP  bool     // restrict TCP: bind denied on every port, connect only to ConnectTCP
	ConnectTCP []uint16 // ports the process may connect(2) to when HandleTCP

	Scope bool // deny signals and abstract unix socket connects to processes outside the sandbox

	AllowDegraded bool // enforce what the kernel offers instead of refusing; Result.Degraded says what was lost
	MinABI        int  // with AllowDegraded: refuse below this ABI all the same (0: accept no Landlock at all)
}

// Result says what Restrict enforced.
type Result struct {
	ABI      int      // effective Landlock ABI of the running kernel (0: none)
	Required int      // ABI the policy needs to be enforced in full
	Rules    []string // rules applied, e.g. "rx /usr", "ro /work/data", "rw /tmp/x", "dev /dev/null", "tcp-connect 443"
	Degraded []string // what the policy asked for and the kernel did not enforce; nil when enforced in full
}

// A list is one of the Policy's path lists, with its short name in errors
// and Result.Rules.
type list struct {
	tag    string
	paths  []string
	rights accessFS
}

func (p Policy) lists() []list {
	return []list{
		{"rx", p.ReadExec, rightsReadExec},
		{"ro", p.ReadOnly, rightsReadOnly},
		{"rw", p.ReadWrite, rightsReadWrite},
		{"dev", p.Devices, rightsDevice},
	}
}

// Validate checks p without touching kernel state: every path is absolute
// and exists (a missing path is an error naming it), devices are character
// devices or directories, no read-only or read-exec path lies inside a
// read-write tree once symbolic links are resolved (Landlock grants the
// union, so it would be writable), and the TCP ports are sane. It reports
// every problem it finds. Restrict makes the same checks on the files it
// then adds rules for.
func (p Policy) Validate() error {
	objs, err := p.open()
	objs.close()
	return err
}

func (p Policy) validatePorts() []error {
	var errs []error
	if !p.HandleTCP && len(p.ConnectTCP) > 0 {
		errs = append(errs, errors.New("landlock: policy: ConnectTCP "+portList(p.ConnectTCP)+" given without HandleTCP: TCP would not be restricted at all"))
	}
	seen := map[uint16]bool{}
	for _, port := range p.ConnectTCP {
		switch {
		case port == 0:
			errs = append(errs, errors.New("landlock: policy: tcp-connect port 0 is not a port"))
		case seen[port]:
			errs = append(errs, errors.New("landlock: policy: tcp-connect port "+strconv.Itoa(int(port))+" listed twice"))
		}
		seen[port] = true
	}
	return errs
}

// portList writes ports as "[443 8443]".
func portList(ports []uint16) string {
	out := "["
	for i, port := range ports {
		if i > 0 {
			out += " "
		}
		out += strconv.Itoa(int(port))
	}
	return out + "]"
}
