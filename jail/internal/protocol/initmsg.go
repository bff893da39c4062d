package protocol

import (
	"errors"
	"slices"
	"strconv"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// MaxInitMsgBytes bounds one line of the init's: a longer one is refused
// (ReadLine) before it is decoded. The largest message, Started or
// SetupFailed, holds the init's phases, what Landlock lacked and the CPU
// list, or an error message: well under 1 KiB on a usual run, a few KiB
// with an error naming many paths or a CPU list of thousands of CPUs.
const MaxInitMsgBytes = 64 << 10

// InitMsg is one message of the init to the supervisor: *Hello,
// *SocketsMade, *SetupFailed, *Started, *Exited or *Ready, and nothing else (the interface is
// sealed by an unexported method). The supervisor takes them apart with a
// type switch; DecodeInitMsg reads them, EncodeInitMsg writes them.
type InitMsg interface {
	Kind() Kind
	encode(w *writer)                  // the fields after the kind
	field(r *reader, key string) error // reads the field key's value
}

// Hello is the init's first message: the version it was built as. Its
// line is the one every version of the jail must read alike (HelloLine):
// a supervisor refuses an init of another version by what it says here.
type Hello struct {
	Version string `json:"version"`
}

// SetupFailed is a setup step of the init that failed: the init exits
// with ExitCode (ExitSetup, or 126/127 for the target's exec) right after.
type SetupFailed struct {
	Stage    Stage  `json:"stage"`
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
	// Phases are the init's setup steps so far, in order, each timed
	// from the end of the one before (the first from the process's start).
	Phases []Phase `json:"phases,omitempty"`
}

// Started says the target runs, with what the init found applying the
// plan that the supervisor cannot know (the rest of the report's enforced
// section follows from the plan).
type Started struct {
	Pid    int     `json:"pid"` // in the run's pid namespace
	Micros int64   `json:"us"`  // the exec step
	Phases []Phase `json:"phases,omitempty"`
	// Landlock is what the kernel gave the plan's policy; nil when it
	// has none (the layer disabled by name).
	Landlock *LandlockFound `json:"landlock,omitempty"`
	// CPUs is the target's CPU affinity, a kernel CPU list.
	CPUs string `json:"cpus,omitempty"`
}

// LandlockFound is what the init found enforcing the Landlock policy: the
// kernel's ABI (0: none) and what the policy asked for that it lacked
// (landlock.Result.ABI and Degraded). The rules follow from the policy
// and the ABI (landlock.Policy.Rules).
type LandlockFound struct {
	ABI      int      `json:"abi"`
	Degraded []string `json:"degraded,omitempty"`
}

// Exited says the target was reaped, and every other process of the run
// with it: its status, the resources of them all, its wall time.
type Exited struct {
	Exited   bool  `json:"exited,omitempty"` // exited normally, with ExitCode
	ExitCode int   `json:"exit_code"`        // 128+Signal when killed
	Signal   int   `json:"signal,omitempty"`
	UserUsec int64 `json:"user_us,omitempty"`
	SysUsec  int64 `json:"sys_us,omitempty"`
	MaxRSSKB int64 `json:"maxrss_kb,omitempty"`
	// WallUsec is the target's wall time on the init's own clock: from
	// just before the fork of the target to its reaping.
	WallUsec int64 `json:"wall_us,omitempty"`
}

// Ready says a slot's init built the view it was sent ahead of its run
// (Config.View), with the phases it took: it waits for the run's config.
type Ready struct {
	Phases []Phase `json:"phases,omitempty"`
}

func (*Ready) Kind() Kind       { return KindReady }
func (*Hello) Kind() Kind       { return KindHello }
func (*SetupFailed) Kind() Kind { return KindError }
func (*Started) Kind() Kind     { return KindStarted }
func (*Exited) Kind() Kind      { return KindExited }

// EncodeInitMsg is m as one line of JSON, newline included: the kind
// first, then the message's fields (initwire.go).
func EncodeInitMsg(m InitMsg) ([]byte, error) {
	if m == nil {
		return nil, errors.New("bug: encode a nil init message")
	}
	w := writer{b: make([]byte, 0, 256)}
	w.open()
	w.str("kind", string(m.Kind()))
	m.encode(&w)
	w.close()
	return w.line(), nil
}

// DecodeInitMsg reads one message of the init from line (one JSON object,
// a trailing newline allowed). It refuses, with an error naming what is
// wrong, a line over MaxInitMsgBytes, one that is not a JSON object of a
// known kind (its first field), one with a field its kind does not have or
// of the wrong type, and one whose values no init sends (a Stage not in
// Stages, a negative duration, a pid or signal out of range). The hello
// alone ignores fields it does not know: it is read by supervisors of
// other versions, which refuse the init by its version, not its shape.
func DecodeInitMsg(line []byte) (InitMsg, error) {
	if len(line) > MaxInitMsgBytes {
		return nil, errTooLong("init message", len(line), MaxInitMsgBytes)
	}
	kind, err := kindOf(line)
	if err != nil {
		return nil, wrap.Error("init message", err)
	}
	var m InitMsg
	switch kind {
	case KindHello:
		m = &Hello{}
	case KindError:
		m = &SetupFailed{}
	case KindStarted:
		m = &Started{}
	case KindExited:
		m = &Exited{}
	case KindSockets:
		m = &SocketsMade{}
	case KindReady:
		m = &Ready{}
	default:
		return nil, errors.New("init message of unknown kind " + strconv.Quote(string(kind)) + " (want hello, sockets, error, started, exited or ready)")
	}
	err = decodeObject(line, kind, m.field)
	if err == nil {
		err = checkInitMsg(m)
	}
	if err != nil {
		return nil, wrap.Error("init message "+strconv.Quote(string(kind)), err)
	}
	return m, nil
}

// checkInitMsg refuses values no init sends, and makes empty lists nil
// (as omitted ones are), so that a message decodes as it encodes.
func checkInitMsg(m InitMsg) error {
	switch m := m.(type) {
	case *SetupFailed:
		m.Phases = nilIfEmpty(m.Phases)
		switch {
		case !slices.Contains(stages, m.Stage):
			return errors.New("unknown stage " + strconv.Quote(string(m.Stage)))
		case m.ExitCode != ExitSetup && m.ExitCode != ExitCannotExecute && m.ExitCode != ExitNotFound:
			return errors.New("exit code " + strconv.Itoa(m.ExitCode) + ", want " + strconv.Itoa(ExitSetup) + ", " +
				strconv.Itoa(ExitCannotExecute) + " or " + strconv.Itoa(ExitNotFound))
		}
		return checkPhases(m.Phases)
	case *Started:
		m.Phases = nilIfEmpty(m.Phases)
		switch {
		case m.Pid <= 0:
			return errors.New("pid " + strconv.Itoa(m.Pid) + ", want a positive pid")
		case m.Micros < 0:
			return errors.New("exec took " + i64(m.Micros) + " µs, want 0 or more")
		case m.Landlock != nil && m.Landlock.ABI < 0:
			return errors.New("the landlock ABI " + strconv.Itoa(m.Landlock.ABI) + ", want 0 or more")
		}
		if m.Landlock != nil {
			m.Landlock.Degraded = nilIfEmpty(m.Landlock.Degraded)
		}
		return checkPhases(m.Phases)
	case *Exited:
		return checkExited(m)
	case *SocketsMade:
		return checkSocketsMade(m)
	case *Ready:
		m.Phases = nilIfEmpty(m.Phases)
		return checkPhases(m.Phases)
	}
	return nil
}

func checkExited(m *Exited) error {
	switch {
	case m.ExitCode < 0 || m.ExitCode > 255:
		return errors.New("exit code " + strconv.Itoa(m.ExitCode) + ", want 0 to 255")
	case m.Signal < 0 || m.Signal > maxSignal || (m.Exited && m.Signal != 0):
		return errors.New("signal " + strconv.Itoa(m.Signal) + " of a target that exited " + strconv.FormatBool(m.Exited) +
			", want 1 to " + strconv.Itoa(maxSignal) + " for one killed, else 0")
	case m.UserUsec < 0 || m.SysUsec < 0 || m.MaxRSSKB < 0 || m.WallUsec < 0:
		return errors.New("negative usage (user " + i64(m.UserUsec) + " µs, system " + i64(m.SysUsec) + " µs, peak " +
			i64(m.MaxRSSKB) + " KiB, wall " + i64(m.WallUsec) + " µs)")
	}
	return nil
}

func checkPhases(ps []Phase) error {
	for _, p := range ps {
		if p.Name == "" || p.Micros < 0 {
			return errors.New("phase " + strconv.Quote(p.Name) + " of " + i64(p.Micros) + " µs, want a name and 0 µs or more")
		}
	}
	return nil
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }
