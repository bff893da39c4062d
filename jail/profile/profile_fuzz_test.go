package profile

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParseProfiles: ParseProfiles never panics, every profile it returns
// passes Check, and each one's View, written back as a profiles file,
// parses into the same profile.
func FuzzParseProfiles(f *testing.F) {
	for _, s := range []string{
		`{"profiles": {}}`,
		`{"profiles": {"default": {"memory": "4G", "timeout": "2h"}}}`,
		`{"profiles": {"web": {"base": "tool", "net": "host", "allow_tcp": [443]}}}`,
		`{"profiles": {"a": {"base": "b"}, "b": {"cpus": 0.5, "pids": 0}}}`,
		`{"profiles": {"x": {"env": ["A=1"], "allow_degraded": ["landlock"], "db_ports": [5432, 3306]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseProfiles(data, Builtins())
		if err != nil {
			return
		}
		for name, p := range got {
			if err := p.Check(); err != nil {
				t.Fatalf("ParseProfiles(%q)[%s].Check() = %v, want nil", data, name, err)
			}
			if p.Name != name {
				t.Fatalf("ParseProfiles(%q)[%s].Name = %q, want %q", data, name, p.Name, name)
			}
			file := viewFile(t, p.View())
			back, err := ParseProfiles(file, Builtins())
			if err != nil {
				t.Fatalf("ParseProfiles(View of %s) error = %v, want nil; file %s", name, err, file)
			}
			if !reflect.DeepEqual(back[name].View(), p.View()) {
				t.Fatalf("ParseProfiles(View of %s)[%s] = %+v, want %+v", name, name, back[name].View(), p.View())
			}
		}
	})
}

// viewFile is a profiles file holding v as its only profile: every field
// but the name, which is the key.
func viewFile(t *testing.T, v ProfileView) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%+v) = %v", v, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatalf("json.Unmarshal(%s) = %v", b, err)
	}
	delete(fields, "name")
	out, err := json.Marshal(map[string]map[string]map[string]json.RawMessage{"profiles": {v.Name: fields}})
	if err != nil {
		t.Fatalf("json.Marshal(profiles file) = %v", err)
	}
	return out
}
