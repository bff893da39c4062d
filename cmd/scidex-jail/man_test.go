package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// grammar is the command line's model, as man and completion see it.
func grammar(t *testing.T) *kong.Application {
	t.Helper()
	var c cli
	p, err := kong.New(&c, kong.Name("scidex-jail"))
	if err != nil {
		t.Fatalf("kong.New() = %v", err)
	}
	return p.Model
}

// TestManPage: the page names every visible command and flag, and groff
// renders it without a warning.
func TestManPage(t *testing.T) {
	r := runJail(t, runOpts{}, "man")
	if r.code != 0 {
		t.Fatalf("scidex-jail man exit = %d, want 0; %v", r.code, r)
	}
	app := grammar(t)
	var want []string
	for _, c := range visibleCommands(app.Node) {
		want = append(want, `.SS "scidex-jail `+c.Name+`"`)
		for _, f := range visibleFlags(c) {
			want = append(want, `\fB\-\-`+strings.ReplaceAll(f.Name, "-", `\-`)+`\fR`)
		}
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("man page lacks %q", w)
		}
	}
	for _, hidden := range []string{`"scidex-jail man"`, `"scidex-jail completion"`, `probe\-child`} {
		if strings.Contains(r.stdout, hidden) {
			t.Errorf("man page shows the hidden %s", hidden)
		}
	}
	groff := exec.Command("groff", "-man", "-ww", "-z")
	groff.Stdin = strings.NewReader(r.stdout)
	if out, err := groff.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww -z = %v, %q; want no error and no warning", err, out)
	}
}

func TestRoff(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a\b`, `a\eb`},
		{".TH x", `\&.TH x`},
		{"x\n'quote", "x\n\\&'quote"},
		{"plain - text", "plain - text"},
	} {
		if got := roff(tc.in); got != tc.want {
			t.Errorf("roff(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestBashCompletion sources the generated script into bash and asks it
// what it completes, as bash would on a TAB.
func TestBashCompletion(t *testing.T) {
	r := runJail(t, runOpts{}, "completion", "bash")
	if r.code != 0 {
		t.Fatalf("scidex-jail completion bash exit = %d, want 0; %v", r.code, r)
	}
	script := filepath.Join(t.TempDir(), "scidex-jail.bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "outdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		words []string // the line, the last word being completed
		want  []string // all of these offered
		not   []string // none of these
	}{
		{"commands", []string{""}, []string{"run", "profiles", "check", "version"}, []string{"man", "completion"}},
		{"run flags", []string{"run", "--cg"}, []string{"--cgroup-parent"}, nil},
		{"run offers --", []string{"run", "--id", "x", "-"}, []string{"--", "--memory", "--keep"}, nil},
		{"net values", []string{"run", "--net", ""}, []string{"none", "loopback", "host"}, nil},
		{"net values after =", []string{"run", "--net", "=", "lo"}, []string{"loopback"}, []string{"none"}},
		{"profiles from the binary", []string{"run", "--profile", ""}, []string{"default", "notebook", "post_process", "tool"}, nil},
		{"check profile", []string{"check", "-p", "no"}, []string{"notebook"}, []string{"default"}},
		{"directories", []string{"run", "--collect", dir + "/o"}, []string{dir + "/outdir"}, nil},
		{"no value for --id", []string{"run", "--id", ""}, nil, []string{"run", "--keep"}},
		{"command after --", []string{"run", "--id", "x", "--", "pytho"}, []string{"python3"}, nil},
		{"check flags", []string{"check", "--"}, []string{"--profile", "--cgroup-parent", "--tmp-root"}, []string{"--probe-child"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			words := append([]string{jailBin}, tc.words...)
			q := make([]string, len(words))
			for i, w := range words {
				q[i] = "'" + w + "'"
			}
			prog := `source "$1"; COMP_WORDS=(` + strings.Join(q, " ") + `); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _scidex_jail; printf '%s\n' "${COMPREPLY[@]}"`
			cmd := exec.Command("/bin/bash", "-c", prog, "bash", script)
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bash completion of %q: %v: %s", tc.words, err, out)
			}
			got := strings.Fields(string(out))
			for _, w := range tc.want {
				if !contains(got, w) {
					t.Errorf("completion of %q = %q, want %q offered", tc.words, got, w)
				}
			}
			for _, w := range tc.not {
				if contains(got, w) {
					t.Errorf("completion of %q = %q, want no %q", tc.words, got, w)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestProfilesIsAProfilesFile: what `profiles` prints is a valid profiles
// file that gives back the same profiles, also with a file of its own.
func TestProfilesIsAProfilesFile(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own.json")
	if err := os.WriteFile(own, []byte(`{"profiles": {"web": {"base": "tool", "net": "host", "allow_tcp": [443]}, "default": {"memory": "3G"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		source string
	}{
		{"built-in", []string{"profiles", "--builtin"}, "scidex-jail: profiles: built-in\n"},
		{"with a file", []string{"profiles", "--config", own}, "scidex-jail: profiles: built-in, overridden by " + own + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := runJail(t, runOpts{}, tc.args...)
			if first.code != 0 || first.stderr != tc.source {
				t.Fatalf("scidex-jail %s = exit %d, stderr %q; want 0, %q", strings.Join(tc.args, " "), first.code, first.stderr, tc.source)
			}
			var parsed map[string]map[string]map[string]any
			if err := json.Unmarshal([]byte(first.stdout), &parsed); err != nil || len(parsed) != 1 || len(parsed["profiles"]) < 4 {
				t.Fatalf("profiles output = %v, %v; want one \"profiles\" object of at least the 4 built-ins", parsed, err)
			}
			saved := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(saved, []byte(first.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			again := runJail(t, runOpts{}, "profiles", "--config", saved)
			if again.code != 0 || !bytes.Equal([]byte(again.stdout), []byte(first.stdout)) {
				t.Errorf("profiles --config <its own output> = exit %d,\n%s\nwant exit 0 and the same output:\n%s\nstderr %s", again.code, again.stdout, first.stdout, again.stderr)
			}
		})
	}
}
