package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

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

// TestLoadProfile: LoadProfile is LoadProfiles' profile of that name,
// read from the file at every call (an edit is seen at the next), with
// the names known when there is no such profile; a map LoadProfiles gave
// is its caller's own, and a change of it is not LoadProfile's.
func TestLoadProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profiles.json")
	write := func(memory string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(`{"profiles": {"lab": {"base": "tool", "memory": "`+memory+`"}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("300M")
	ps, _, err := LoadProfiles(path)
	if err != nil {
		t.Fatal(err)
	}
	delete(ps, "lab") // the caller's own map
	steps := []struct {
		name, profile, memory string
		want                  int64 // lab's memory; 0: no such profile
	}{
		{"the file's", "lab", "", 300 << 20},
		{"a built-in", "tool", "", 512 << 20},
		{"edited", "lab", "400M", 400 << 20},
		{"unknown", "nope", "", 0},
	}
	for _, s := range steps {
		if s.memory != "" {
			write(s.memory)
		}
		p, ok, known, err := LoadProfile(path, s.profile)
		if err != nil {
			t.Fatalf("%s: LoadProfile(%s) = %v", s.name, s.profile, err)
		}
		if s.want == 0 {
			if want := []string{"default", "lab", "notebook", "post_process", "tool"}; ok || !reflect.DeepEqual(known, want) {
				t.Errorf("%s: LoadProfile(%s) = ok %v, known %v, want false and %v", s.name, s.profile, ok, known, want)
			}
			continue
		}
		all, _, _ := LoadProfiles(path)
		if got := p.Limits.Int(limits.Memory); !ok || got != s.want || !reflect.DeepEqual(p, all[s.profile]) {
			t.Errorf("%s: LoadProfile(%s) = ok %v, memory %d, want true, %d and LoadProfiles' %+v", s.name, s.profile, ok, got, s.want, all[s.profile])
		}
	}
	if _, _, _, err := LoadProfile(filepath.Join(t.TempDir(), "none.json"), "default"); err == nil {
		t.Errorf("LoadProfile of a named file that does not exist = nil error, want it refused")
	}
}

// TestNoFileError: the error of a profiles file that does not exist is
// fs.ErrNotExist and the open's *fs.PathError, with the message it had
// when made with fmt.
func TestNoFileError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.json")
	_, err := readProfilesFile(path)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != path {
		t.Errorf("readProfilesFile(%s) = %v, want fs.ErrNotExist and a *fs.PathError of the path", path, err)
	}
	want := fmt.Errorf("read profiles file %s: %w", path, &fs.PathError{Op: "open", Path: path, Err: unix.ENOENT})
	if err == nil || err.Error() != want.Error() {
		t.Errorf("readProfilesFile(%s) = %v, want %v", path, err, want)
	}
}
