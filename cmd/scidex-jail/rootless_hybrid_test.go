package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// requireHybrid skips on a host whose memory controller is on cgroup v2:
// the v1 messages and recipe are a hybrid host's (this host is one).
func requireHybrid(t *testing.T) {
	t.Helper()
	if v := hostCgroupVersion(t); v != 1 {
		t.Skipf("needs the memory controller on cgroup v1 (a hybrid host); this host has it on cgroup v%d", v)
	}
}

// optOut is what every message of a missing cgroup names: the opt-out, in
// the CLI's and Python's words, and its cost.
var optOut = []string{"--unsafe-disable cgroup", `unsafe_disable=("cgroup",)`, "memory, CPU and pids limits", "pid namespace"}

// recipeRE is the v1 recipe's root command, in backquotes.
var recipeRE = regexp.MustCompile("As root: `([^`]+)`, then run with --cgroup-parent (/[a-z0-9-]+)")

// TestRootlessHybridMessages: as a useradd'ed account on a hybrid host,
// run and check fail at the cgroup stage naming the opt-out and its cost
// and a recipe for a subtree; the recipe, run as written by root, gives
// the account cgroups (a run enforces its limits in them, check's
// delegation line turns OK); the opt-out runs.
func TestRootlessHybridMessages(t *testing.T) {
	requireHybrid(t)
	a := newAccount(t)
	tmp := a.tmpRootFor(t)
	rep := filepath.Join(tmp, "report.json")

	r := runAs(t, a.setpriv(jailBin, "run", "--id", "hyb", "--tmp-root", tmp, "--report", rep, "--", "/bin/true"), rep)
	wantStatus(t, r, report.StatusSetupError, 125)
	msg := r.report.SetupError
	if msg == nil || msg.Stage != "cgroup" {
		t.Fatalf("setup_error = %+v, want the cgroup stage", msg)
	}
	for _, w := range append(optOut, "As root:", "chown -R "+strconv.Itoa(a.UID)) {
		if !strings.Contains(msg.Message, w) || !strings.Contains(r.stderr, w) {
			t.Errorf("run's setup error lacks %q:\nreport: %s\nstderr: %s", w, msg.Message, r.stderr)
		}
	}
	os.Remove(rep)

	out, _ := a.setpriv(jailBin, "check", "--tmp-root", tmp).Output()
	checks := parseCheck(t, string(out))
	for _, name := range []string{"cgroup", "cgroup delegation"} {
		c := checks[name]
		if c.state != "MISSING" {
			t.Errorf("check %s = %s, want MISSING", name, c.state)
		}
		for _, w := range append(optOut, "As root:") {
			if !strings.Contains(c.fix, w) {
				t.Errorf("check %s's fix lacks %q: %s", name, w, c.fix)
			}
		}
	}

	// The recipe, as written, by root.
	m := recipeRE.FindStringSubmatch(checks["cgroup"].fix)
	if m == nil {
		t.Fatalf("check's cgroup fix has no recipe matching %s: %s", recipeRE, checks["cgroup"].fix)
	}
	script, parent := m[1], m[2]
	t.Cleanup(func() {
		// rmdir each subtree the recipe made (the run's leaves are gone).
		dirs, _ := filepath.Glob("/sys/fs/cgroup/*" + parent)
		for _, d := range dirs {
			if err := os.Remove(d); err != nil {
				t.Errorf("remove the recipe's %s: %v", d, err)
			}
		}
	})
	if out, err := exec.Command("/bin/sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("the recipe %q: %v\n%s", script, err, out)
	}
	r = runAs(t, a.setpriv(jailBin, "run", "--id", "hyb", "--tmp-root", tmp, "--report", rep, "--cgroup-parent", parent,
		"--memory", "64M", "--pids", "32", "--", "/bin/true"), rep)
	wantStatus(t, r, report.StatusOK, 0)
	if c := r.report.Enforced.Cgroup; c == nil || c.Version != 1 || len(c.Paths) == 0 || !strings.Contains(c.Paths[0], parent+"/scidex-hyb-") {
		t.Errorf("enforced.cgroup after the recipe = %+v, want v1 leaves below %s", c, parent)
	}
	os.Remove(rep)
	out, _ = a.setpriv(jailBin, "check", "--tmp-root", tmp, "--cgroup-parent", parent).Output()
	if c := parseCheck(t, string(out)); c["cgroup delegation"].state != "OK" || c["cgroup"].state != "OK" {
		t.Errorf("check with the recipe's parent: cgroup %+v, delegation %+v; want both OK", c["cgroup"], c["cgroup delegation"])
	}

	// The opt-out, as named.
	r = runAs(t, a.setpriv(jailBin, "run", "--id", "hyb", "--tmp-root", tmp, "--report", rep, "--unsafe-disable", "cgroup", "--", "/bin/true"), rep)
	wantStatus(t, r, report.StatusOK, 0)
}
