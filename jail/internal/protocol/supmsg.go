package protocol

import (
	"encoding/json"
	"fmt"
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

type (
	bareWire struct {
		Kind Kind `json:"kind"`
	}
	signalWire struct {
		Kind Kind `json:"kind"`
		Signal
	}
)

// EncodeSupervisorMsg is m as one line of JSON, newline included.
func EncodeSupervisorMsg(m SupervisorMsg) ([]byte, error) {
	var w any = bareWire{m.Kind()}
	if s, ok := m.(Signal); ok {
		w = signalWire{KindSignal, s}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode supervisor message %s: %w", m.Kind(), err)
	}
	return append(b, '\n'), nil
}

// DecodeSupervisorMsg reads one message of the supervisor from line (one
// JSON object, a trailing newline allowed), refusing with an error naming
// what is wrong a line over MaxSupervisorMsgBytes, one that is not a JSON
// object of a known kind, one with a field its kind does not have or of
// the wrong type, and a signal that is not 1 to 64.
func DecodeSupervisorMsg(line []byte) (SupervisorMsg, error) {
	if len(line) > MaxSupervisorMsgBytes {
		return nil, fmt.Errorf("supervisor message of %d bytes, over the limit of %d", len(line), MaxSupervisorMsgBytes)
	}
	kind, err := peekKind(line)
	if err != nil {
		return nil, fmt.Errorf("supervisor message: %w", err)
	}
	var m SupervisorMsg
	switch kind {
	case KindGo, KindKill:
		var w bareWire
		if err = decodeStrict(line, &w); err == nil {
			err = sameKind(w.Kind, kind)
		}
		m = map[Kind]SupervisorMsg{KindGo: Go{}, KindKill: Kill{}}[kind]
	case KindSignal:
		var w signalWire
		if err = decodeStrict(line, &w); err == nil {
			err = sameKind(w.Kind, kind)
		}
		m = w.Signal
		if err == nil && (w.Signal.Signal < 1 || w.Signal.Signal > maxSignal) {
			err = fmt.Errorf("signal %d, want 1 to %d", w.Signal.Signal, maxSignal)
		}
	default:
		return nil, fmt.Errorf("supervisor message of unknown kind %q (want go, kill or signal)", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("supervisor message %q: %w", kind, err)
	}
	return m, nil
}
