package protocol

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// initMsgs are one message of each kind, as the init sends them.
var initMsgs = []InitMsg{
	&Hello{Version: "0~git20261125.3be00d1"},
	&SetupFailed{Stage: StageMounts, Error: "mount /usr: EPERM", ExitCode: ExitSetup, Phases: []Phase{{"runtime", 1700}, {"config", 400}}},
	&SetupFailed{Stage: StageExec, Error: "x: command not found", ExitCode: ExitNotFound},
	&Started{Pid: 2, Micros: 340, Phases: []Phase{{"runtime", 1700}}},
	&Exited{Exited: true, ExitCode: 3, UserUsec: 1, SysUsec: 2, MaxRSSKB: 3, WallUsec: 4},
	&Exited{ExitCode: 137, Signal: 9},
	&SocketsMade{N: 3},
	&Ready{Phases: []Phase{{"cpus", 10}, {"mounts", 900}}},
}

// TestInitMsgRoundTrip: every kind decodes as it was encoded.
func TestInitMsgRoundTrip(t *testing.T) {
	for _, m := range initMsgs {
		line, err := EncodeInitMsg(m)
		if err != nil {
			t.Fatalf("EncodeInitMsg(%#v) = %v", m, err)
		}
		got, err := DecodeInitMsg(line)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("DecodeInitMsg(%s) = %#v, %v; want %#v", line, got, err, m)
		}
	}
}

// TestHelloLineDecodes: the init's hand-made hello is a Hello.
func TestHelloLineDecodes(t *testing.T) {
	got, err := DecodeInitMsg(HelloLine("v1"))
	if h, ok := got.(*Hello); err != nil || !ok || h.Version != "v1" {
		t.Errorf("DecodeInitMsg(HelloLine(v1)) = %#v, %v; want &Hello{v1}", got, err)
	}
}

// TestDecodeInitMsgRefuses: what no init sends is refused, the error
// naming it.
func TestDecodeInitMsgRefuses(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		{"not JSON", `hello`, "invalid character"},
		{"not an object", `["hello"]`, "cannot unmarshal array"},
		{"no kind", `{"version":"v"}`, `unknown kind ""`},
		{"unknown kind", `{"kind":"bye"}`, `unknown kind "bye"`},
		{"supervisor's kind", `{"kind":"go"}`, `unknown kind "go"`},
		{"unknown field", `{"kind":"started","pid":2,"us":1,"extra":1}`, `unknown field "extra"`},
		{"field of another kind", `{"kind":"exited","exit_code":0,"pid":2}`, `unknown field "pid"`},
		{"wrong type", `{"kind":"started","pid":"2","us":1}`, "cannot unmarshal string"},
		{"fraction", `{"kind":"started","pid":2.5,"us":1}`, "cannot unmarshal number"},
		{"two values", `{"kind":"exited","exit_code":0} {}`, "more than one"},
		{"two values, slow path", `{ "kind":"exited","exit_code":0} {}`, "after top-level value"},
		{"two kinds", `{"kind":"exited","exit_code":0,"kind":"started"}`, `kind "exited", then "started"`},
		{"two kinds in a hello", `{"kind":"hello","version":"v","kind":"exited"}`, `kind "hello", then "exited"`},
		{"unknown stage", `{"kind":"error","stage":"nowhere","error":"x","exit_code":125}`, `unknown stage "nowhere"`},
		{"wrong exit code", `{"kind":"error","stage":"exec","error":"x","exit_code":3}`, "exit code 3"},
		{"no pid", `{"kind":"started","us":1}`, "pid 0"},
		{"negative exec", `{"kind":"started","pid":2,"us":-1}`, "exec took -1"},
		{"negative phase", `{"kind":"started","pid":2,"us":1,"phases":[{"name":"x","us":-1}]}`, `phase "x"`},
		{"exit code over 255", `{"kind":"exited","exit_code":256}`, "exit code 256"},
		{"signal of an exit", `{"kind":"exited","exited":true,"exit_code":0,"signal":9}`, "signal 9"},
		{"signal over 64", `{"kind":"exited","exit_code":0,"signal":65}`, "signal 65"},
		{"negative usage", `{"kind":"exited","exit_code":0,"wall_us":-1}`, "negative usage"},
		{"oversized", `{"kind":"hello","version":"` + strings.Repeat("v", MaxInitMsgBytes) + `"}`, "over the limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := DecodeInitMsg([]byte(c.line))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("DecodeInitMsg(%.80s) = %#v, %v; want an error containing %q", c.line, m, err, c.want)
			}
		})
	}
}

// TestHelloOfAnotherVersion: a hello with fields this version does not
// know is still read, so that the version check can refuse it by name.
func TestHelloOfAnotherVersion(t *testing.T) {
	m, err := DecodeInitMsg([]byte(`{"kind":"hello","version":"v9","features":["x"]}`))
	if h, ok := m.(*Hello); err != nil || !ok || h.Version != "v9" {
		t.Errorf("DecodeInitMsg(hello with more fields) = %#v, %v; want &Hello{v9}", m, err)
	}
}

// FuzzDecodeInitMsg: the decoder never panics, and what it accepts
// encodes to a line that decodes to the same message.
func FuzzDecodeInitMsg(f *testing.F) {
	for _, m := range initMsgs {
		line, _ := EncodeInitMsg(m)
		f.Add(line)
	}
	f.Add([]byte(`{"kind":"started","pid":1,"us":0,"phases":[]}`))
	f.Add([]byte(`{"kind":"hello","version":"\ud800","Version":"x"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := DecodeInitMsg(line)
		if err != nil {
			return
		}
		again, err := EncodeInitMsg(m)
		if err != nil {
			t.Fatalf("EncodeInitMsg(%#v) = %v, of a message DecodeInitMsg(%q) accepted", m, err, line)
		}
		m2, err := DecodeInitMsg(again)
		if err != nil || !reflect.DeepEqual(m2, m) {
			t.Fatalf("DecodeInitMsg(%q) = %#v, %v; want %#v, decoded from %q", again, m2, err, m, line)
		}
	})
}

// TestDecodeSupervisorMsg: each kind round-trips; what the supervisor
// never sends is refused, naming it.
func TestDecodeSupervisorMsg(t *testing.T) {
	for _, m := range []SupervisorMsg{Go{}, Kill{}, Signal{Signal: 15}} {
		line, err := EncodeSupervisorMsg(m)
		got, derr := DecodeSupervisorMsg(line)
		if err != nil || derr != nil || got != m {
			t.Errorf("DecodeSupervisorMsg(EncodeSupervisorMsg(%#v) = %q, %v) = %#v, %v; want it back", m, line, err, got, derr)
		}
	}
	for _, c := range []struct{ name, line, want string }{
		{"unknown kind", `{"kind":"stop"}`, `unknown kind "stop"`},
		{"init's kind", `{"kind":"hello","version":"v"}`, `unknown kind "hello"`},
		{"field of go", `{"kind":"go","signal":9}`, `unknown field "signal"`},
		{"two kinds", `{"kind":"go","kind":"kill"}`, `kind "go", then "kill"`},
		{"signal 0", `{"kind":"signal","signal":0}`, "signal 0"},
		{"signal 65", `{"kind":"signal","signal":65}`, "signal 65"},
		{"oversized", `{"kind":"go"}` + strings.Repeat(" ", MaxSupervisorMsgBytes), "over the limit"},
	} {
		if m, err := DecodeSupervisorMsg([]byte(c.line)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: DecodeSupervisorMsg(%.80q) = %#v, %v; want an error containing %q", c.name, c.line, m, err, c.want)
		}
	}
}

// FuzzDecodeSupervisorMsg: the init's decoder never panics, and what it
// accepts encodes to a line that decodes to the same message.
func FuzzDecodeSupervisorMsg(f *testing.F) {
	for _, s := range []string{`{"kind":"go"}`, `{"kind":"kill"}`, `{"kind":"signal","signal":15}`, `{"kind":"signal","signal":1e1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := DecodeSupervisorMsg(line)
		if err != nil {
			return
		}
		again, err := EncodeSupervisorMsg(m)
		if err != nil {
			t.Fatalf("EncodeSupervisorMsg(%#v) = %v, of a message DecodeSupervisorMsg(%q) accepted", m, err, line)
		}
		if m2, err := DecodeSupervisorMsg(again); err != nil || m2 != m {
			t.Fatalf("DecodeSupervisorMsg(%q) = %#v, %v; want %#v, decoded from %q", again, m2, err, m, line)
		}
	})
}

// TestReadLine: lines come whole, up to the limit; a longer one is
// refused with ErrLineTooLong, the end of the stream is io.EOF.
func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("a\n"+strings.Repeat("b", 40)+"\nlast"), 16)
	for _, c := range []struct {
		max     int
		want    string
		wantErr error
	}{
		{8, "a\n", nil},
		{100, strings.Repeat("b", 40) + "\n", nil},
		{100, "last", nil},
		{100, "", io.EOF},
	} {
		line, err := ReadLine(r, c.max)
		if string(line) != c.want || !errors.Is(err, c.wantErr) {
			t.Errorf("ReadLine(max %d) = %q, %v; want %q, %v", c.max, line, err, c.want, c.wantErr)
		}
	}
	long := bufio.NewReaderSize(strings.NewReader(strings.Repeat("c", 50)+"\n"), 16)
	if line, err := ReadLine(long, 20); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("ReadLine(50 bytes, max 20) = %q, %v; want ErrLineTooLong", line, err)
	}
}
