package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/landlock"
	"github.com/scidex/scidex-jail/seccomp"
)

// fullConfig sets every field of the config, strings with what JSON
// escapes among them.
func fullConfig() *Config {
	return &Config{
		Command: []string{"/usr/bin/python3", "-c", "print(\"é\\t\u2028\x01\")"}, Env: []string{},
		RunDir: "/tmp/r", Hostname: "h", UID: 1000, GID: -1,
		Mounts: Mounts{
			System:   []SystemEntry{{Path: "/usr"}, {Path: "/bin", Symlink: "usr/bin"}},
			ReadOnly: []string{"/d <&>"}, ReadWrite: []string{"/out"}, Links: []Link{{Name: "data", Target: "/d <&>"}}, Files: []File{{Path: "/etc/passwd", Content: "a:x:1:1::/:/bin/sh\n"}},
			RunDir: "/tmp/r", RunDirBytes: 1 << 40, ShmBytes: -3, Scratch: "/home/analysis", ScratchTmp: "/home/analysis/tmp",
			ScratchBytes: 7, KeepScratch: true, Meminfo: "MemTotal: 1 kB\n", Names: true,
			Cgroup: &CgroupView{Version: 1, Controllers: []string{"cpu", "memory"}},
		},
		Loopback: true, Setgroups: true, Stdio: true, Groups: []int{1000, 65534}, CPUs: 2, View: true, ViewSum: "ab",
		Sockets: &Sockets{DNS: true, Ports: []int{443, 80}, Proxy: 3128},
		Security: Security{
			Landlock: &landlock.Policy{ReadExec: []string{"/usr"}, ReadOnly: []string{}, ReadWrite: []string{"/tmp/r"}, Devices: []string{"/dev/null"},
				HandleTCP: true, ConnectTCP: []uint16{443, 65535}, Scope: true, AllowDegraded: true, MinABI: 7},
			Seccomp: &seccomp.Policy{Name: "default", Net: "none", Label: "none"},
		},
	}
}

// TestConfigRoundTrip: a config decodes as it was encoded, the full one,
// the empty one and the one of a real run.
func TestConfigRoundTrip(t *testing.T) {
	real, err := DecodeConfig(testLine(t, "config.json"))
	if err != nil {
		t.Fatalf("DecodeConfig(testdata/config.json) = %v", err)
	}
	for _, c := range []*Config{fullConfig(), {}, real} {
		line := EncodeConfig(c)
		got, err := DecodeConfig(line)
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("DecodeConfig(%s) = %+v, %v; want %+v", line, got, err, c)
		}
	}
}

// TestConfigMatchesEncodingJSON: the hand-written codec reads what
// encoding/json writes of the config and writes what it reads, by the
// struct tags: a field added to Config, Mounts or a Policy and not to the
// codec fails here.
func TestConfigMatchesEncodingJSON(t *testing.T) {
	for _, c := range []*Config{fullConfig(), {}} {
		var viaJSON Config
		if err := json.Unmarshal(EncodeConfig(c), &viaJSON); err != nil || !reflect.DeepEqual(&viaJSON, c) {
			t.Errorf("json.Unmarshal(EncodeConfig(c)) = %+v, %v; want %+v", viaJSON, err, c)
		}
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := DecodeConfig(line); err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("DecodeConfig(%s) = %+v, %v; want %+v", line, got, err, c)
		}
	}
	var want Config
	if err := json.Unmarshal(testLine(t, "config.json"), &want); err != nil {
		t.Fatal(err)
	}
	if got, _ := DecodeConfig(testLine(t, "config.json")); !reflect.DeepEqual(got, &want) {
		t.Errorf("DecodeConfig(testdata/config.json) = %+v; want encoding/json's %+v", got, want)
	}
}

// TestInitMsgMatchesEncodingJSON: each init message, as encoding/json
// reads and writes it with the kind first.
func TestInitMsgMatchesEncodingJSON(t *testing.T) {
	msgs := append(initMsgs[:len(initMsgs):len(initMsgs)],
		&Started{Pid: 9, Micros: 1, Landlock: &LandlockFound{ABI: 3, Degraded: []string{"scope"}}, CPUs: "0-1"},
		&Started{Pid: 9, Landlock: &LandlockFound{}})
	for _, m := range msgs {
		line, _ := EncodeInitMsg(m)
		fromJSON := reflect.New(reflect.TypeOf(m).Elem())
		if err := json.Unmarshal(line, fromJSON.Interface()); err != nil || !reflect.DeepEqual(fromJSON.Interface(), m) {
			t.Errorf("json.Unmarshal(%s) = %+v, %v; want %+v", line, fromJSON.Interface(), err, m)
		}
		fields, _ := json.Marshal(m)
		jsonLine := `{"kind":"` + string(m.Kind()) + `",` + string(fields[1:])
		if got, err := DecodeInitMsg([]byte(jsonLine)); err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("DecodeInitMsg(%s) = %+v, %v; want %+v", jsonLine, got, err, m)
		}
	}
}

// TestDecodeConfigRefuses: what no supervisor sends is refused, naming it.
func TestDecodeConfigRefuses(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		{"not an object", `[]`, "cannot unmarshal array"},
		{"unknown field", `{"comand":[]}`, `unknown field "comand"`},
		{"unknown nested field", `{"mounts":{"system":[{"path":"/usr","mode":1}]}}`, `unknown field "mode"`},
		{"field of another case", `{"Command":[]}`, `unknown field "Command"`},
		{"wrong type", `{"uid":"1000"}`, `cannot unmarshal string into "uid"`},
		{"fraction", `{"cpus":1.5}`, "cannot unmarshal number 1.5"},
		{"port out of range", `{"security":{"landlock":{"ConnectTCP":[65536]}}}`, "number 65536"},
		{"string of a list", `{"env":"PATH=/bin"}`, `cannot unmarshal string into "env"`},
		{"unterminated", `{"hostname":"h`, "unexpected end of the line"},
		{"control character", "{\"hostname\":\"h\x01\"}", "invalid character byte 0x1"},
		{"bad escape", `{"hostname":"\x"}`, "invalid character 'x'"},
		{"leading zero", `{"uid":01}`, "want a digit"},
		{"trailing value", `{} {}`, "more than one"},
		{"oversized", `{"hostname":"` + strings.Repeat("h", MaxConfigBytes) + `"}`, "over the limit"},
	} {
		if got, err := DecodeConfig([]byte(c.line)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: DecodeConfig(%.80q) = %+v, %v; want an error containing %q", c.name, c.line, got, err, c.want)
		}
	}
}

// FuzzDecodeConfig: the init's decoder of its config never panics, and
// what it accepts encodes to a line that decodes to the same config.
func FuzzDecodeConfig(f *testing.F) {
	f.Add(EncodeConfig(fullConfig()))
	f.Add(EncodeConfig(&Config{}))
	f.Add([]byte(`{"command":["\ud83d\ude00\ud800x"],"groups":[],"mounts":{"files":[],"cgroup":null}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := DecodeConfig(line)
		if err != nil {
			return
		}
		again := EncodeConfig(c)
		if c2, err := DecodeConfig(again); err != nil || !reflect.DeepEqual(c2, c) {
			t.Fatalf("DecodeConfig(%q) = %+v, %v; want %+v, decoded from %q", again, c2, err, c, line)
		}
	})
}

// FuzzString: a string reads as encoding/json reads it, from the codec's
// line and from any line encoding/json takes as a string.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9\ud800\udc00\ud800\u0041\/\b"`, "\"\xff\xfe\"", `"<&>\u2028"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var want string
		if json.Unmarshal(line, &want) == nil && len(line) > 0 && line[0] == '"' {
			r := reader{b: line}
			if got, err := r.string("s"); err != nil || got != want || r.end() != nil {
				t.Fatalf("read %q = %q, %v; encoding/json reads %q", line, got, err, want)
			}
		}
		s := string(line) // as a value: the codec writes what encoding/json reads back
		_ = json.Unmarshal(mustJSON(t, s), &want)
		var got string
		if err := json.Unmarshal(appendString(nil, s), &got); err != nil || got != want {
			t.Fatalf("json.Unmarshal(appendString(%q)) = %q, %v; want %q", s, got, err, want)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFullConfigIsFull: fullConfig sets every field, so that a field
// added to Config, Mounts or a Policy (omitempty or not) reaches the
// codec's tests above, which then fail until the codec writes and reads it.
func TestFullConfigIsFull(t *testing.T) {
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch {
		case v.IsZero():
			t.Errorf("fullConfig leaves %s zero: set it, and add it to the codec", path)
		case v.Kind() == reflect.Pointer:
			walk(v.Elem(), path)
		case v.Kind() == reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		}
	}
	walk(reflect.ValueOf(fullConfig()), "Config")
}

// TestDecodedStringsOwnTheirBytes: the strings of a decoded config are
// not the caller's bytes (plain ones are substrings of the reader's own
// copy of the line): a line read into a buffer that is then reused, as
// bufio's is, leaves them as they were decoded.
func TestDecodedStringsOwnTheirBytes(t *testing.T) {
	want := fullConfig()
	line := EncodeConfig(want)
	got, err := DecodeConfig(line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = 'x'
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DecodeConfig(line) after the line's bytes were overwritten = %+v, want %+v", got, want)
	}
}
