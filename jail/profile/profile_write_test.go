package profile

import (
	"reflect"
	"testing"
)

// TestProfilesFileRoundTrip: the written profiles file parses back, over
// the built-ins and over nothing at all, into the same profiles.
func TestProfilesFileRoundTrip(t *testing.T) {
	withExtra, err := ParseProfiles([]byte(`{"profiles": {"web": {"base": "tool", "net": "host", "allow_tcp": [443], "env": ["A=1"]},
		"default": {"memory": "3G", "timeout": "1h30m", "allow_degraded": ["landlock"]}}}`), Builtins())
	if err != nil {
		t.Fatalf("ParseProfiles(extra) = %v", err)
	}
	for _, tc := range []struct {
		name string
		ps   map[string]Profile
	}{
		{"built-ins", Builtins()},
		{"built-ins with overrides and a new profile", withExtra},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file, err := ProfilesFile(tc.ps)
			if err != nil {
				t.Fatalf("ProfilesFile() = %v", err)
			}
			for _, over := range []struct {
				name string
				base map[string]Profile
			}{{"over the built-ins", Builtins()}, {"over nothing", map[string]Profile{}}} {
				// Over nothing, "default" must come first: new profiles start
				// from it. Every field is given, so its values are the file's.
				base := over.base
				if len(base) == 0 {
					base = map[string]Profile{"default": Builtins()["default"]}
				}
				back, err := ParseProfiles(file, base)
				if err != nil {
					t.Fatalf("ParseProfiles(ProfilesFile()) %s = %v; file:\n%s", over.name, err, file)
				}
				if len(back) != len(tc.ps) {
					t.Errorf("ParseProfiles(ProfilesFile()) %s has %d profiles, want %d", over.name, len(back), len(tc.ps))
				}
				for name, p := range tc.ps {
					if !reflect.DeepEqual(back[name].View(), p.View()) {
						t.Errorf("ParseProfiles(ProfilesFile()) %s [%s] = %+v, want %+v", over.name, name, back[name].View(), p.View())
					}
				}
			}
		})
	}
}
