package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
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

// TestServeRootlessNoCgroup: a rootless server told to run without a
// cgroup (serve --unsafe-disable cgroup, as Python's
// Server(unsafe_disable=("cgroup",)) starts it; on a hybrid host such as
// this one, the way a rootless account runs at all) makes its slots
// without one: its runs start from slots, no slot leaf is made, and it
// logs no slot it failed to make. The same on cgroup v2 (the VM).
func TestServeRootlessNoCgroup(t *testing.T) {
	a := newAccount(t)
	tmp := a.tmpRootFor(t)
	c := startServeCmd(t, a.setpriv(jailBin, "serve", "--slots", "1", "--unsafe-disable", "cgroup"))
	pid := c.cmd.Process.Pid // setpriv execs the server: the same process
	slots := func() int { return len(childrenOf(t, pid)) }
	waitFor(t, func() bool { return slots() == 1 }, "the slot's init, a child of the server")
	// A slot's init is a child before it is ready (its hello): a run may
	// still start cold; runs go on, a pause after each cold one, until
	// three took a slot.
	var fromSlot, cold int
	for i := 0; fromSlot < 3 && i < 40; i++ {
		name := "r" + strconv.Itoa(i)
		c.send(runReq(name, request.Request{ID: "hyb-serve-" + name, Cwd: "/", TmpRoot: tmp, UnsafeDisable: []string{"cgroup"}}, "/bin/true"))
		r := c.await(name)
		if r.Event != "done" {
			t.Fatalf("reply %+v, want done; server stderr: %s", r, c.stderr)
		}
		rep := r.report(t)
		if rep.Status != report.StatusOK || rep.Enforced.Cgroup != nil {
			t.Fatalf("run %s: status %s, cgroup %+v; want ok without a cgroup", name, rep.Status, rep.Enforced.Cgroup)
		}
		if rep.Start == "slot" {
			fromSlot++
		} else {
			cold++
			time.Sleep(100 * time.Millisecond)
		}
	}
	if fromSlot < 3 {
		t.Errorf("%d runs started from a slot (%d cold), want 3; server stderr: %s", fromSlot, cold, c.stderr)
	}
	if l := (slotLeaves{pid}).added(t); len(l) != 0 {
		t.Errorf("slot leaves %v, want none", l)
	}
	unix.Kill(pid, unix.SIGTERM)
	c.cmd.Wait()
	if s := c.stderr.String(); s != "" {
		t.Errorf("server stderr = %q, want nothing (no slot failed)", s)
	}
}

// childrenOf are pid's child processes.
func childrenOf(t *testing.T, pid int) []string {
	t.Helper()
	var out []string
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}
