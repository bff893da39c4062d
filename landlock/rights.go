package landlock

import (
	"strconv"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Sets of Landlock rights as the kernel's bit masks: the
// LANDLOCK_ACCESS_FS_*, LANDLOCK_ACCESS_NET_* and LANDLOCK_SCOPE_* bits,
// named by go-landlock's syscall package (llsys).
type (
	accessFS  uint64
	accessNet uint64
	scopeSet  uint64
)

// Filesystem rights each kind of Policy entry grants. They are granted on the
// whole file hierarchy below a directory; a rule on a non-directory gets only
// the file rights (fileRights), because the kernel rejects directory rights
// on a file with EINVAL.
const (
	rightsReadExec accessFS = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir

	rightsReadOnly accessFS = llsys.AccessFSReadFile | llsys.AccessFSReadDir

	// Everything a working directory needs, including execute (see the
	// package doc) and refer (rename and link between its subdirectories).
	// Not make_char/make_block (device nodes have no place in a run
	// directory), not ioctl_dev, not resolve_unix.
	rightsReadWrite accessFS = llsys.AccessFSExecute | llsys.AccessFSWriteFile |
		llsys.AccessFSReadFile | llsys.AccessFSReadDir | llsys.AccessFSRemoveDir |
		llsys.AccessFSRemoveFile | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg |
		llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo | llsys.AccessFSMakeSym |
		llsys.AccessFSRefer | llsys.AccessFSTruncate

	// Read, write and ioctl; read_dir so that a device directory such as
	// /dev/pts can be listed. Not truncate: O_TRUNC is a no-op on devices.
	rightsDevice accessFS = llsys.AccessFSReadFile | llsys.AccessFSWriteFile |
		llsys.AccessFSIoctlDev | llsys.AccessFSReadDir

	// The rights that apply to a non-directory (the kernel's ACCESS_FILE).
	fileRights accessFS = llsys.AccessFSExecute | llsys.AccessFSWriteFile |
		llsys.AccessFSReadFile | llsys.AccessFSTruncate | llsys.AccessFSIoctlDev
)

// handledFS is the set of filesystem rights the ruleset restricts on a kernel
// with the given ABI: every right the kernel knows, so that whatever the
// policy does not grant is denied. Rights of ABI 9 and later (resolve_unix)
// are hardening the policy does not depend on: handled when the kernel has
// them, never required and never reported as lost.
func handledFS(abi int) accessFS {
	switch {
	case abi >= 9: // + resolve_unix: connect/sendmsg to pathname unix sockets
		return 1<<17 - 1
	case abi >= 5: // + ioctl_dev
		return 1<<16 - 1
	case abi >= 3: // + truncate
		return 1<<15 - 1
	case abi >= 2: // + refer
		return 1<<14 - 1
	case abi >= 1:
		return 1<<13 - 1
	}
	return 0
}

// handledNet is the set of network rights restricted for p on a kernel with
// the given ABI. UDP (ABI 10) is left alone: the policy has no UDP rules.
func handledNet(p Policy, abi int) accessNet {
	if !p.HandleTCP || abi < 4 {
		return 0
	}
	return llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP
}

// scoped is the set of IPC scopes restricted for p on a kernel with the
// given ABI.
func scoped(p Policy, abi int) scopeSet {
	if !p.Scope || abi < 6 {
		return 0
	}
	return llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket
}

// A feature is one thing a policy can ask Landlock to enforce that appeared
// in a given ABI.
type feature struct {
	name   string
	abi    int
	wanted func(Policy) bool
	lost   string // what goes unenforced on an older kernel
}

func always(Policy) bool { return true }

// features lists, by ABI, what a policy can need beyond ABI 1's filesystem
// access control. Required and the Degraded list are computed from it alone.
var features = []feature{
	{"fs.refer", 2, func(p Policy) bool { return len(p.ReadWrite) > 0 },
		"Landlock cannot grant rename and link between directories inside read-write trees (it denies them everywhere instead)"},
	{"fs.truncate", 3, always,
		"Landlock does not restrict truncate(2) on files outside read-write trees"},
	{"net.tcp", 4, func(p Policy) bool { return p.HandleTCP },
		"Landlock does not restrict TCP bind(2) and connect(2)"},
	{"fs.ioctl_dev", 5, always,
		"Landlock does not restrict ioctl(2) on device files"},
	{"scope.signal", 6, func(p Policy) bool { return p.Scope },
		"Landlock does not scope signals to the sandbox"},
	{"scope.abstract_unix_socket", 6, func(p Policy) bool { return p.Scope },
		"Landlock does not scope abstract unix sockets to the sandbox"},
}

// notEnforced is the single Degraded entry when the kernel has no Landlock.
// Each entry says only what Landlock does not do: other layers (the mount
// view, namespaces, seccomp) may still hold what the caller promised.
const notEnforced = "landlock: not enforced at all"

// required returns the lowest ABI that enforces p in full.
func required(p Policy) int {
	need := 1
	for _, f := range features {
		if f.wanted(p) {
			need = max(need, f.abi)
		}
	}
	return need
}

// lostFeatures returns what p asks for that a kernel with the given ABI does
// not enforce, one entry per feature as "name (needs ABI n): what is lost";
// nil when the kernel enforces p in full.
func lostFeatures(p Policy, abi int) []string {
	if abi < 1 {
		return []string{notEnforced}
	}
	var lost []string
	for _, f := range features {
		if f.wanted(p) && abi < f.abi {
			lost = append(lost, f.name+" (needs ABI "+strconv.Itoa(f.abi)+"): "+f.lost)
		}
	}
	return lost
}

// pathRights returns the rights a rule on a path grants, given the rights of
// its list, whether the path is a directory and what the ruleset handles.
func pathRights(list accessFS, isDir bool, handled accessFS) accessFS {
	r := list & handled
	if !isDir {
		r &= fileRights
	}
	return r
}

// The kernel's names of the rights, by bit, for error messages.
var (
	fsNames = []string{"execute", "write_file", "read_file", "read_dir",
		"remove_dir", "remove_file", "make_char", "make_dir", "make_reg",
		"make_sock", "make_fifo", "make_block", "make_sym", "refer",
		"truncate", "ioctl_dev", "resolve_unix"}
	netNames   = []string{"bind_tcp", "connect_tcp", "bind_udp", "connect_send_udp"}
	scopeNames = []string{"abstract_unix_socket", "signal"}
)

func (a accessFS) String() string  { return bitNames(uint64(a), fsNames) }
func (a accessNet) String() string { return bitNames(uint64(a), netNames) }
func (s scopeSet) String() string  { return bitNames(uint64(s), scopeNames) }

// bitNames lists the set bits of a by name, "{read_file,read_dir}"; a
// bit without a name shows as its number.
func bitNames(a uint64, names []string) string {
	out := "{"
	for i := range 64 {
		if a&(1<<i) == 0 {
			continue
		}
		if len(out) > 1 {
			out += ","
		}
		if i < len(names) {
			out += names[i]
		} else {
			out += "bit " + strconv.Itoa(i)
		}
	}
	return out + "}"
}
