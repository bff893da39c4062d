package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/promise"
)

// checkNames are the checks `scidex-jail check` prints, in order, then one
// line per promise of the contract.
var checkNames = append([]string{"uids", "user namespaces", "init", "identity", "landlock", "seccomp", "cgroup", "cgroup controllers", "tmp-root",
	"userns sysctls", "apparmor userns", "cgroup delegation"}, promiseCheckNames()...)

func promiseCheckNames() []string {
	var out []string
	for _, p := range promise.Promises() {
		out = append(out, "promise "+string(p))
	}
	return out
}

var checkLineRE = regexp.MustCompile(`^(OK|MISSING|DEGRADED) +([a-z_ -]+): (.+)$`)

type parsedCheck struct {
	state, text, fix string
}

// parseCheck reads check's stdout into name -> state, text and fix,
// failing on a line it does not expect.
func parseCheck(t *testing.T, out string) map[string]parsedCheck {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "profile ") || !strings.HasPrefix(lines[len(lines)-1], "verdict: ") {
		t.Fatalf("check output does not start with the profile line and end with the verdict:\n%s", out)
	}
	got := map[string]parsedCheck{}
	last := ""
	for _, l := range lines[1 : len(lines)-1] {
		if fix, ok := strings.CutPrefix(strings.TrimLeft(l, " "), "fix: "); ok && last != "" && strings.HasPrefix(l, " ") {
			c := got[last]
			c.fix = fix
			got[last] = c
			continue
		}
		m := checkLineRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("check line %q is neither a check nor a fix line; output:\n%s", l, out)
		}
		got[m[2]] = parsedCheck{state: m[1], text: m[3]}
		last = m[2]
	}
	return got
}

// TestCheckDefaultProfile: on this host every protection of the default
// profile is available, and check says so line by line.
func TestCheckDefaultProfile(t *testing.T) {
	requireRoot(t)
	r := runJail(t, runOpts{}, "check", "--profile", "default", "--tmp-root", tmpRoot(t))
	if r.code != 0 {
		t.Fatalf("check --profile default exit = %d, want 0; %v", r.code, r)
	}
	got := parseCheck(t, r.stdout)
	for _, name := range checkNames {
		c, ok := got[name]
		if !ok {
			t.Errorf("check output has no %q line; %v", name, r)
			continue
		}
		if c.state != "OK" || c.fix != "" {
			t.Errorf("check %s = %s (%s; fix %q), want OK without a fix", name, c.state, c.text, c.fix)
		}
	}
	if len(got) != len(checkNames) {
		t.Errorf("check printed %d checks, want %d (%v); %v", len(got), len(checkNames), checkNames, r)
	}
	for _, want := range []string{"Landlock ABI 7", "cgroup version 1", "default/none", "leases a host uid and gid of its own from 1879048192-1879113727", "list /etc refused with EACCES",
		"signal the parent refused with EPERM", "socket(AF_PACKET) refused with EAFNOSUPPORT", "memory (memory 2G, swap 0; peak and OOM accounting)", "cpu (cpus 2)", "pids (pids 512)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check output lacks %q; %v", want, r)
		}
	}
	if !strings.Contains(r.stdout, "verdict: profile default can be enforced in full") {
		t.Errorf("check verdict missing or wrong; %v", r)
	}
}

// TestCheckProfiles checks the other profiles, including one from a
// profiles file with net host, whose Landlock TCP rules are tried too.
func TestCheckProfiles(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cfg := filepath.Join(root, "profiles.json")
	if err := os.WriteFile(cfg, []byte(`{"profiles": {"web": {"base": "tool", "net": "host", "allow_tcp": [443]}, "nolimits": {"cpus": "none", "pids": "none"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		profile string
		want    []string // in the output
		dont    []string // not in the output
	}{
		{"notebook", "notebook", []string{"default/loopback", "net, ipc"}, []string{"TCP bind"}},
		{"tool", "tool", []string{"memory (memory 512M", "pids (pids 128)", "cpu (cpus 1)"}, nil},
		{"net host from a file", "web", []string{"default/host", "TCP bind refused with EACCES", "TCP bind and connect rules (4)", "from " + cfg},
			[]string{"pid, net,"}},
		{"no cpu or pids limit", "nolimits", []string{"the profile needs memory (memory 2G, swap 0; peak and OOM accounting); all offered"}, []string{"cpu (", "pids ("}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runJail(t, runOpts{}, "check", "--config", cfg, "--profile", c.profile, "--tmp-root", root)
			if r.code != 0 {
				t.Fatalf("check --profile %s exit = %d, want 0; %v", c.profile, r.code, r)
			}
			for name, pc := range parseCheck(t, r.stdout) {
				if pc.state != "OK" {
					t.Errorf("check --profile %s: %s = %s (%s), want OK", c.profile, name, pc.state, pc.text)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("check --profile %s output lacks %q; %v", c.profile, w, r)
				}
			}
			for _, d := range c.dont {
				if strings.Contains(r.stdout, d) {
					t.Errorf("check --profile %s output holds %q; %v", c.profile, d, r)
				}
			}
		})
	}
}

// TestCheckFailures: a bad profile is a usage error (125); a host problem
// (here a tmp-root the analysis uid cannot enter) is a MISSING line with a
// fix and exit status 1.
func TestCheckFailures(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	private := filepath.Join(root, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	badCfg := filepath.Join(root, "bad.json")
	if err := os.WriteFile(badCfg, []byte(`{"profiles": {"default": {"memry": "1G"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		args    []string
		code    int
		missing string // the check that must be MISSING
		stderr  string
		fix     string // in the fix line of the missing check
	}{
		{"no such profile", []string{"--profile", "nosuch", "--tmp-root", root}, 125, "", `--profile "nosuch": no such profile; known: default, notebook, post_process, tool`, ""},
		{"bad profiles file", []string{"--config", badCfg, "--tmp-root", root}, 125, "", "profiles.default.memry: unknown field", ""},
		{"missing profiles file", []string{"--config", filepath.Join(root, "none.json"), "--tmp-root", root}, 125, "", "read profiles file", ""},
		{"uid zero", []string{"--uid", "0", "--gid", "0", "--tmp-root", root}, 125, "", "must be non-zero", ""},
		{"uid without gid", []string{"--uid", "4242", "--tmp-root", root}, 125, "", "--uid and --gid go together", ""},
		{"tmp-root not enterable by the analysis", []string{"--tmp-root", private}, 1, "tmp-root", "", "chmod 0755 " + private},
		{"tmp-root missing", []string{"--tmp-root", filepath.Join(root, "nope")}, 1, "tmp-root", "", "mkdir -m 0755 " + filepath.Join(root, "nope")},
		{"tmp-root relative", []string{"--tmp-root", "tmp"}, 1, "tmp-root", "", "absolute path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runJail(t, runOpts{}, append([]string{"check"}, c.args...)...)
			if r.code != c.code {
				t.Fatalf("check %v exit = %d, want %d; %v", c.args, r.code, c.code, r)
			}
			if !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("check %v stderr = %q, want it to hold %q", c.args, r.stderr, c.stderr)
			}
			if c.missing == "" {
				if r.stdout != "" {
					t.Errorf("check %v stdout = %q, want nothing before a usage error", c.args, r.stdout)
				}
				return
			}
			got := parseCheck(t, r.stdout)
			for name, pc := range got {
				want := "OK"
				if name == c.missing {
					want = "MISSING"
				}
				if pc.state != want {
					t.Errorf("check %v: %s = %s (%s), want %s", c.args, name, pc.state, pc.text, want)
				}
			}
			if fix := got[c.missing].fix; !strings.Contains(fix, c.fix) {
				t.Errorf("check %v: %s fix = %q, want it to hold %q", c.args, c.missing, fix, c.fix)
			}
			if !strings.Contains(r.stdout, "cannot be enforced in full") {
				t.Errorf("check %v verdict does not say the profile cannot be enforced; %v", c.args, r)
			}
		})
	}
}
