package landlock

import (
	"errors"
	"strconv"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// A plan is the ruleset for one kernel ABI, described as data before it is
// written to the kernel in one place (applyThread, applyAll).
type plan struct {
	fs     accessFS   // filesystem rights handled
	net    accessNet  // network rights handled
	scoped scopeSet   // IPC scopes restricted
	paths  []pathRule // one rule per path, rights masked to what is handled
	ports  []uint16   // tcp-connect rules (when TCP is handled)
	descr  []string   // Result.Rules
}

type pathRule struct {
	path   string
	rights accessFS
	fd     int // the path opened O_PATH by Policy.open: the file that was checked
}

// String describes what the ruleset handles, for error messages.
func (pl plan) String() string {
	return "ruleset handling fs " + pl.fs.String() + ", net " + pl.net.String() + ", scopes " + pl.scoped.String()
}

// newPlan builds the ruleset that enforces p on a kernel with the given ABI
// (>= 1): every right that kernel knows is handled, each path gets its
// list's rights masked to what is handled and, on files, to file rights.
// objs are p's paths opened (Policy.open), in the order of its lists.
func newPlan(p Policy, abi int, objs opened) plan {
	pl := plan{fs: handledFS(abi), net: handledNet(p, abi), scoped: scoped(p, abi)}
	i := 0
	for _, l := range p.lists() {
		for _, path := range l.paths {
			obj := objs[i]
			i++
			rights := pathRights(l.rights, obj.mode.IsDir(), pl.fs)
			pl.paths = append(pl.paths, pathRule{path, rights, obj.fd})
		}
	}
	if pl.net != 0 {
		pl.ports = p.ConnectTCP
	}
	pl.descr = p.Rules(abi)
	return pl
}

// Rules are the Result.Rules of p enforced on a kernel of Landlock ABI
// abi: one per path ("rx /usr"), then the TCP and scope rules the ABI
// handles; nil below ABI 1, where nothing is enforced. They follow from
// p and the ABI alone, so a caller that planned p and learns the ABI the
// enforcing process found (Result.ABI) can tell the rules without the
// kernel, as the jail's supervisor does for the report.
func (p Policy) Rules(abi int) []string {
	if abi < 1 {
		return nil
	}
	var rules []string
	for _, l := range p.lists() {
		for _, path := range l.paths {
			rules = append(rules, l.tag+" "+path)
		}
	}
	if handledNet(p, abi) != 0 {
		for _, port := range p.ConnectTCP {
			rules = append(rules, "tcp-connect "+strconv.Itoa(int(port)))
		}
		if len(p.ConnectTCP) == 0 {
			rules = append(rules, "tcp-connect none")
		}
		rules = append(rules, "tcp-bind none")
	}
	if scoped(p, abi) != 0 {
		rules = append(rules, "scope signal", "scope abstract-unix-socket")
	}
	return rules
}

// Required is the Landlock ABI p needs to be enforced in full
// (Result.Required).
func (p Policy) Required() int { return required(p) }

// Restrict validates p and applies it to the calling process, every thread
// of it, and everything it starts from then on. It cannot be undone. It sets
// no_new_privs on all threads (Landlock requires it of unprivileged callers).
// Every thread enters the domain with go-landlock's all-threads system calls
// (psx: libpsx with cgo, the Go runtime's AllThreadsSyscall without).
//
// Fail closed: if the kernel cannot enforce all of p, Restrict changes
// nothing and returns an error matching ErrUnsupported, unless
// p.AllowDegraded, in which case it enforces what the kernel offers and
// lists the rest in Result.Degraded, as long as the kernel's ABI is at
// least p.MinABI (the floor a caller that weighed the loss relies on). Any
// other error also leaves the process unrestricted; the caller must then not
// run the target.
func (p Policy) Restrict() (Result, error) {
	return p.restrict(applyAll)
}

// RestrictThread is Restrict for the calling OS thread only: the ruleset
// is made and enforced with the system calls themselves
// (landlock_restrict_self without TSYNC), and no_new_privs is set on this
// thread. What the thread starts afterwards (threads, children) inherits
// the domain; the process's other threads do not. For a caller that locked
// its goroutine to the thread and starts the confined program from it,
// after making sure none of its other threads runs code that needs the
// restriction: there is then no all-threads synchronisation to pay for
// (psx before ABI 8). Fail closed exactly as Restrict.
func (p Policy) RestrictThread() (Result, error) {
	return p.restrict(applyThread)
}

func (p Policy) restrict(apply func(plan) error) (Result, error) {
	res := Result{Required: required(p)}
	objs, err := p.open()
	if err != nil {
		return res, err
	}
	defer objs.close()
	k, err := probe()
	res.ABI = k.abi
	if err != nil {
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			return res, wrap.Error("landlock: probe ABI", err)
		}
		if !p.AllowDegraded || p.MinABI > 0 {
			ue.Needed, ue.Lost = res.Required, lostFeatures(p, 0)
			if p.AllowDegraded {
				ue.Needed = p.MinABI
			}
			return res, ue
		}
		res.ABI, res.Degraded = 0, lostFeatures(p, 0)
		return res, nil
	}
	lost := lostFeatures(p, k.abi)
	switch {
	case len(lost) > 0 && !p.AllowDegraded:
		return res, &UnsupportedError{Found: k.abi, Needed: res.Required, Lost: lost, Reason: k.reason()}
	case k.abi < p.MinABI:
		return res, &UnsupportedError{Found: k.abi, Needed: p.MinABI, Lost: lostFeatures(p, k.abi), Reason: k.reason()}
	}
	pl := newPlan(p, k.abi, objs)
	if err := apply(pl); err != nil {
		return res, err
	}
	res.Rules, res.Degraded = pl.descr, lost
	return res, nil
}
