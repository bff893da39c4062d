package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesNameWhatWasWritten: a bad value is refused (exit 125, nothing
// run) naming what the user wrote, in the words of where it was written:
// a profile's read_only path by its field's path in the profiles file,
// the same path given as a flag by the flag, and an input by --input;
// a profile's env entry by its field, where the jail named --env for both.
func TestMessagesNameWhatWasWritten(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent")
	cfg := writeProfiles(t, dir, fmt.Sprintf(`{"profiles": {
		"z": {"base": "default", "read_only": [%q]},
		"ok": {"base": "default"}}}`, missing))
	for _, c := range []struct {
		name  string
		args  []string
		want  string
		never string
	}{
		{"profile's read_only", []string{"--profile", "z"}, fmt.Sprintf("profiles.z.read_only %q does not exist", missing), "--ro"},
		{"--ro", []string{"--profile", "ok", "--ro", missing}, fmt.Sprintf("--ro %q does not exist", missing), "profiles."},
		{"--ro over a profile's", []string{"--profile", "ok", "--ro", dir, "--ro", missing}, fmt.Sprintf("--ro %q does not exist", missing), "profiles."},
		{"--input", []string{"--profile", "ok", "--input", missing}, fmt.Sprintf("--input %q does not exist", missing), "--ro"},
		{"--rw", []string{"--profile", "ok", "--rw", missing}, fmt.Sprintf("--rw %q does not exist", missing), "profiles."},
		{"--env", []string{"--profile", "ok", "--env", "NOVALUE"}, `--env "NOVALUE" is not of the form NAME=VALUE`, "profiles."},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--config", cfg, "--id", "origin", "--tmp-root", tmpRoot(t)}, c.args...)
			r := runJail(t, runOpts{}, append(args, "--", "/bin/true")...)
			if r.code != exitSetup || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, c.never) {
				t.Errorf("scidex-jail %s = exit %d, stderr %q; want exit %d naming %s (never %s)", strings.Join(c.args, " "), r.code, r.stderr, exitSetup, c.want, c.never)
			}
		})
	}
	// The profiles file itself refuses a bad env entry, naming its field.
	bad := writeProfiles(t, dir, `{"profiles": {"e": {"base": "default", "env": ["NOVALUE"]}}}`)
	r := runJail(t, runOpts{}, "run", "--config", bad, "--profile", "default", "--id", "origin", "--", "/bin/true")
	if want := `profiles.e.env "NOVALUE" is not of the form NAME=VALUE`; r.code != exitSetup || !strings.Contains(r.stderr, want) {
		t.Errorf("a profiles file with a bad env entry = exit %d, stderr %q; want exit %d naming %s", r.code, r.stderr, exitSetup, want)
	}
}
