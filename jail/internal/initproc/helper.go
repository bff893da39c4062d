package initproc

import (
	"bytes"
	"errors"
	"runtime"
	"strconv"

	"github.com/scidex/scidex-jail/internal/sysfile"
	"github.com/scidex/scidex-jail/internal/wrap"
)

// A slot's init confines the thread that forks the target (its main
// thread, the leader) ahead of its run: identity, Landlock, seccomp
// (ahead.go). What the run's config then asks that needs the init's
// privileges (the run directory's mount move, the meminfo written, the
// root sealed, the hostname, the network mode's sockets) cannot be done
// by that thread: Landlock refuses every mount change to a confined
// thread, the filter refuses mount(2), and it holds no capability. It is
// done by the helper, a thread of the init that is never confined, and
// with it the rest of the run's setup up to "go" (reading the run's
// config, its stdio, the wait for "go": conn.setUp), so that the main
// thread, waiting confined, is woken once, to fork: each hand-over
// between the two is a wake-up of a thread (measured: the mounts phase
// 0.12-0.14 to 0.06-0.07 ms and wait-go 0.04 to 0.01 ms against a
// hand-over for the privileged steps alone, load 8).
//
// The helper is a goroutine locked to a thread of its own for the init's
// whole life, started before the main thread confines itself, and the
// only code it ever runs is the work the main thread hands it (do). A
// locked thread runs nothing but its goroutine, so no other goroutine of
// the init ever runs there, and the main thread, locked to the main
// goroutine, never runs the helper's work.
//
// The Go runtime never makes a thread by cloning a locked one: newm
// (runtime/proc.go, Go 1.26) hands the creation of a thread asked for
// from a thread whose goroutine called LockOSThread (m.lockedExt != 0) to
// the template thread, which LockOSThread starts at its first call while
// the process is in a known state, here in this package's init(), long
// before anything is confined. So no thread of the init made after the
// confinement inherits the main thread's credentials, Landlock domain or
// filter. That is the runtime's fact, not a promise of its API: the
// helper checks its own thread as the kernel sees it (unconfined) before
// it takes any work, and the run fails closed if it is not.
type helper struct {
	work chan func()
	done chan struct{}
}

// startHelper starts the helper and waits until its thread is locked and
// checked against base, the /proc/thread-self/status of the main thread
// read before it confined itself (threadStatus).
func startHelper(base []byte) (*helper, error) {
	h := &helper{work: make(chan func()), done: make(chan struct{})}
	ready := make(chan error)
	go h.loop(base, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return h, nil
}

// loop is the helper's goroutine. Its thread stays locked: when the
// process ends, it ends with it; when the check fails, the goroutine
// returns locked and the runtime ends the thread.
func (h *helper) loop(base []byte, ready chan<- error) {
	runtime.LockOSThread()
	if err := unconfined(base); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for f := range h.work {
		f()
		h.done <- struct{}{}
	}
}

// do runs f on the helper's thread and returns when it has.
func (h *helper) do(f func()) {
	h.work <- f
	<-h.done
}

// threadStatus is the calling thread's /proc/thread-self/status.
func threadStatus() ([]byte, error) {
	b, err := sysfile.Read("/proc/thread-self/status")
	if err != nil {
		return nil, wrap.Error("read the init's thread status", err)
	}
	return b, nil
}

// unconfined checks that the calling thread holds the init's privileges,
// as the kernel sees them: those of base, the main thread before it
// confined itself.
func unconfined(base []byte) error {
	b, err := threadStatus()
	if err != nil {
		return err
	}
	return checkUnconfined(b, base)
}

// capSysAdmin is CAP_SYS_ADMIN's bit.
const capSysAdmin = 21

// sameAsBase are the lines of a thread's status that its confinement
// changes (the identity dropped: ids, capabilities, no_new_privs; the
// filter loaded: Seccomp, Seccomp_filters). Landlock shows in none, but
// it follows the identity drop on the same thread.
var sameAsBase = []string{"Uid", "Gid", "CapPrm", "CapEff", "NoNewPrivs", "Seccomp", "Seccomp_filters"}

// checkUnconfined is unconfined's check of a /proc/<tid>/status against
// base: its permitted capabilities effective, among them CAP_SYS_ADMIN,
// which the run's mounts and hostname need (the init's uid is the
// analysis' own, with the capabilities its spawn gave it; a thread cloned
// from the confined one holds none), and every line the confinement
// changes as the main thread had it before. Not absolute values: the
// server may run with no_new_privs or a filter of its own (a systemd
// unit's NoNewPrivileges= or SystemCallFilter=), which every thread of
// the init inherits; a thread cloned from the confined one has one
// filter more and none of the capabilities.
func checkUnconfined(status, base []byte) error {
	got := statusLines(status, append([]string{"CapPrm"}, sameAsBase...)...)
	want := statusLines(base, sameAsBase...)
	bad := func(k, w string) error {
		return errors.New("bug: the init's helper thread has " + k + " " + strconv.Quote(got[k]) + ", want " + w + ": it is not the unconfined thread the run's mounts need")
	}
	if eff, err := strconv.ParseUint(got["CapEff"], 16, 64); err != nil || eff&(1<<capSysAdmin) == 0 {
		return bad("CapEff", "CAP_SYS_ADMIN among them")
	}
	if got["CapEff"] != got["CapPrm"] {
		return bad("CapEff", "CapPrm's "+strconv.Quote(got["CapPrm"]))
	}
	for _, k := range sameAsBase {
		if got[k] != want[k] {
			return bad(k, strconv.Quote(want[k])+" as the init's main thread before its confinement")
		}
	}
	return nil
}

// statusLines are the values of keys in a /proc/<tid>/status, trimmed; a
// missing key is "".
func statusLines(status []byte, keys ...string) map[string]string {
	got := make(map[string]string, len(keys))
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		for _, key := range keys {
			if string(k) == key {
				got[key] = string(bytes.TrimSpace(v))
			}
		}
	}
	return got
}
