package protocol

import (
	"errors"
	"strconv"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// MaxSupervisorMsgBytes bounds one line of the supervisor's after the
// config: its messages are a few bytes each.
const MaxSupervisorMsgBytes = 256

// SupervisorMsg is one message of the supervisor to the init after the
// config: Go, Kill or Signal, and nothing else (the interface is sealed by
// an unexported method). DecodeSupervisorMsg reads them in the init.
type SupervisorMsg interface {
	Kind() Kind
	supervisorMsg()
}

// Go lets the init start the target.
type Go struct{}

// Kill has the init SIGKILL every other process of the namespace now.
type Kill struct{}

// Signal has the init send Signal to the target.
type Signal struct {
	Signal int `json:"signal"`
}

func (Go) Kind() Kind     { return KindGo }
func (Kill) Kind() Kind   { return KindKill }
func (Signal) Kind() Kind { return KindSignal }

func (Go) supervisorMsg()     {}
func (Kill) supervisorMsg()   {}
func (Signal) supervisorMsg() {}

// EncodeSupervisorMsg is m as one line of JSON, newline included: the
// kind first, then a Signal's signal.
func EncodeSupervisorMsg(m SupervisorMsg) ([]byte, error) {
	if m == nil {
		return nil, errors.New("bug: encode a nil supervisor message")
	}
	w := writer{b: make([]byte, 0, 32)}
	w.open()
	w.str("kind", string(m.Kind()))
	if s, ok := m.(Signal); ok {
		w.int("signal", int64(s.Signal))
	}
	w.close()
	return w.line(), nil
}

// DecodeSupervisorMsg reads one message of the supervisor from line (one
// JSON object, a trailing newline allowed), refusing with an error naming
// what is wrong a line over MaxSupervisorMsgBytes, one that is not a JSON
// object of a known kind (its first field), one with a field its kind
// does not have or of the wrong type, and a signal that is not 1 to 64.
func DecodeSupervisorMsg(line []byte) (SupervisorMsg, error) {
	if len(line) > MaxSupervisorMsgBytes {
		return nil, errTooLong("supervisor message", len(line), MaxSupervisorMsgBytes)
	}
	kind, err := kindOf(line)
	if err != nil {
		return nil, wrap.Error("supervisor message", err)
	}
	var m SupervisorMsg
	switch kind {
	case KindGo, KindKill:
		m = Go{}
		if kind == KindKill {
			m = Kill{}
		}
		err = decodeObject(line, kind, func(_ *reader, key string) error { return unknownField(key) })
	case KindSignal:
		var s Signal
		err = decodeObject(line, kind, func(r *reader, key string) (err error) {
			if key != "signal" {
				return unknownField(key)
			}
			s.Signal, err = r.int(`"signal"`)
			return err
		})
		if m = s; err == nil && (s.Signal < 1 || s.Signal > maxSignal) {
			err = errors.New("signal " + strconv.Itoa(s.Signal) + ", want 1 to " + strconv.Itoa(maxSignal))
		}
	default:
		return nil, errors.New("supervisor message of unknown kind " + strconv.Quote(string(kind)) + " (want go, kill or signal)")
	}
	if err != nil {
		return nil, wrap.Error("supervisor message "+strconv.Quote(string(kind)), err)
	}
	return m, nil
}
