package profile

import (
	"maps"
	"os"
	"reflect"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
)

// TestParsedFileKept: a profiles file's bytes are parsed once while they
// stay the same; an edit is parsed at the next call, and a file that does
// not parse is never kept.
func TestParsedFileKept(t *testing.T) {
	a := []byte(`{"profiles": {"lab": {"base": "tool", "memory": "300M"}}}`)
	b := []byte(`{"profiles": {"lab": {"base": "tool", "memory": "400M"}}}`)
	bad := []byte(`{"profiles": {"lab": {"memroy": "1G"}}}`)
	var p parsedFile
	steps := []struct {
		name   string
		data   []byte
		memory int64 // lab's; 0: the parse fails
		parsed int
	}{
		{"first", a, 300 << 20, 1},
		{"the same bytes", a, 300 << 20, 1},
		{"edited", b, 400 << 20, 2},
		{"edited, again", b, 400 << 20, 2},
		{"broken", bad, 0, 3},
		{"broken, again: never kept", bad, 0, 4},
		{"the last good bytes: still kept", b, 400 << 20, 4},
		{"the first bytes again", a, 300 << 20, 5},
	}
	for _, s := range steps {
		ps, err := p.parse(s.data)
		switch {
		case s.memory == 0 && err == nil:
			t.Errorf("%s: parse() = nil error, want the file refused", s.name)
		case s.memory != 0 && err != nil:
			t.Errorf("%s: parse() = %v", s.name, err)
		case s.memory != 0:
			if got := ps["lab"].Limits.Int(limits.Memory); got != s.memory {
				t.Errorf("%s: lab's memory = %d, want %d", s.name, got, s.memory)
			}
			want, _ := ParseProfiles(s.data, Builtins())
			if !reflect.DeepEqual(ps, want) {
				t.Errorf("%s: parse() = %+v, want ParseProfiles's %+v", s.name, ps, want)
			}
			delete(ps, "lab") // the caller's own map
		}
		if p.parsed != s.parsed {
			t.Errorf("%s: parsed %d times, want %d", s.name, p.parsed, s.parsed)
		}
	}
}

// TestBuiltinsKept: without a profiles file the built-ins are made once
// (their lists are the same at every call) and each call's map is the
// caller's own, equal to Builtins().
func TestBuiltinsKept(t *testing.T) {
	first := keptBuiltins()
	for i := range 3 {
		ps := maps.Clone(first)
		delete(ps, "default") // the caller's own map
		got := keptBuiltins()
		if !reflect.DeepEqual(got, Builtins()) {
			t.Fatalf("keptBuiltins() call %d = %+v, want Builtins()'s %+v", i, got, Builtins())
		}
		if &got["default"].DataDirs[0] != &first["default"].DataDirs[0] {
			t.Errorf("keptBuiltins() call %d made the built-ins again, want them kept", i)
		}
	}
	if _, err := os.Stat(DefaultProfilesFile); err == nil {
		return // the packaged file is LoadProfiles' (TestParsedFileKept)
	}
	a, _, err := LoadProfiles("")
	if err != nil {
		t.Fatalf("LoadProfiles(\"\") = %v", err)
	}
	delete(a, "default")
	b, _, err := LoadProfiles("")
	if err != nil {
		t.Fatalf("LoadProfiles(\"\") = %v", err)
	}
	if !reflect.DeepEqual(b, Builtins()) {
		t.Errorf("LoadProfiles(\"\") after a caller's delete = %+v, want Builtins()'s %+v", b, Builtins())
	}
}
