package main

import (
	"encoding/json"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
)

// TestProfilesSchema: `profiles --schema` prints every row of the limits'
// table, versioned, as the Python package reads it.
func TestProfilesSchema(t *testing.T) {
	r := runJail(t, runOpts{}, "profiles", "--schema")
	if r.code != 0 {
		t.Fatalf("scidex-jail profiles --schema exit = %d, want 0; %v", r.code, r)
	}
	var got struct {
		Version int                  `json:"version"`
		Limits  []limits.LimitSchema `json:"limits"`
		Options []struct {
			Name    string   `json:"name"`
			Choices []string `json:"choices"`
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("profiles --schema = %q, want JSON: %v", r.stdout, err)
	}
	if got.Version != limits.SchemaVersion || len(got.Limits) != len(limits.All) || len(got.Options) == 0 {
		t.Fatalf("profiles --schema = version %d, %d limits, %d options; want version %d, %d limits, the options",
			got.Version, len(got.Limits), len(got.Options), limits.SchemaVersion, len(limits.All))
	}
	for i, l := range limits.All {
		s := got.Limits[i]
		if s.Name != l.Name || s.Flag != "--"+l.Flag || s.ProfileField != l.Field || s.Zero != l.Zero || s.None != l.None {
			t.Errorf("profiles --schema limit %d = %+v, want the row %s", i, s, l.Name)
		}
	}
	if pids := got.Limits[5]; pids.Name != "pids" || pids.Min == nil || *pids.Min != 16 || pids.Messages["zero"] == "" {
		t.Errorf("profiles --schema pids = %+v, want min 16 and the zero message", pids)
	}
}
