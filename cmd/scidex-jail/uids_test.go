package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// Issue 32, item 8: as root, each run and each served slot is a host uid
// and gid of its own, leased from --uid-range, never 65534 nor an
// account's; seen from outside in /proc/PID/status and in the report.

// leasedRun is a run started in the background whose analysis sleeps on
// a marker until the test cancels it.
type leasedRun struct {
	cmd    *exec.Cmd
	marker string
	rep    string
	errb   *bytes.Buffer
}

// startSleeper starts `run ... -- sleep MARKER` in root with extra flags.
func startSleeper(t *testing.T, root, id string, extra ...string) *leasedRun {
	t.Helper()
	l := &leasedRun{marker: marker(t), rep: filepath.Join(t.TempDir(), "report.json"), errb: &bytes.Buffer{}}
	args := append([]string{"run", "--id", id, "--tmp-root", root, "--report", l.rep}, extra...)
	l.cmd = exec.Command(jailBin, append(args, "--", "/bin/sleep", l.marker)...)
	l.cmd.Stderr = l.errb
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if l.cmd.ProcessState == nil {
			l.cmd.Process.Kill()
			l.cmd.Wait()
		}
	})
	return l
}

// analysisPid is the pid of the sleep carrying marker (the jail's own
// command line holds it too), or 0.
func analysisPid(marker string) int {
	for _, pid := range testutil.ProcessesWith(marker) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); string(comm) == "sleep\n" {
			return pid
		}
	}
	return 0
}

// hostIDs waits for the analysis to start and reads its real, effective,
// saved and filesystem uids and gids from the host's /proc.
func (l *leasedRun) hostIDs(t *testing.T) (uids, gids []int) {
	t.Helper()
	waitFor(t, func() bool { return analysisPid(l.marker) > 0 }, "the analysis "+l.marker+" to start")
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", analysisPid(l.marker)))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		for _, f := range strings.Fields(v) {
			n, _ := strconv.Atoi(f)
			switch k {
			case "Uid":
				uids = append(uids, n)
			case "Gid":
				gids = append(gids, n)
			}
		}
	}
	return uids, gids
}

// cancel ends the run with SIGTERM and returns its report.
func (l *leasedRun) cancel(t *testing.T) *report.Report {
	t.Helper()
	l.cmd.Process.Signal(syscall.SIGTERM)
	err := l.cmd.Wait()
	r := finishJail(t, l.cmd, err, l.rep, &bytes.Buffer{}, l.errb)
	if r.report == nil {
		t.Fatalf("run %s: no report; %v", l.marker, r)
	}
	return r.report
}

// wantOwnID checks that a host id is a lease of the default range: not
// 65534, no account's uid, no group's gid.
func wantOwnID(t *testing.T, what string, id int) {
	t.Helper()
	if !uidlease.Default.Contains(uint64(id)) {
		t.Errorf("%s: host id %d, want one of the default range %s", what, id, uidlease.Default)
	}
	if u, err := user.LookupId(strconv.Itoa(id)); err == nil {
		t.Errorf("%s: host id %d is account %s's, want no account's", what, id, u.Username)
	}
	if g, err := user.LookupGroupId(strconv.Itoa(id)); err == nil {
		t.Errorf("%s: host id %d is group %s's, want no group's", what, id, g.Name)
	}
}

// TestRunsLeaseOwnIDs: two concurrent one-shot runs as root have host
// uids and gids of their own, different, from the range, in the kernel
// (all four ids of the analysis) and in the report.
func TestRunsLeaseOwnIDs(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	runs := []*leasedRun{startSleeper(t, root, "uid-a"), startSleeper(t, root, "uid-b")}
	var seen []int
	for i, l := range runs {
		uids, gids := l.hostIDs(t)
		if len(uids) != 4 || len(gids) != 4 || slices.Min(uids) != slices.Max(uids) || !slices.Equal(uids, gids) {
			t.Fatalf("run %d: /proc status Uid %v Gid %v, want one id for all eight", i, uids, gids)
		}
		wantOwnID(t, fmt.Sprintf("run %d", i), uids[0])
		seen = append(seen, uids[0])
	}
	if seen[0] == seen[1] {
		t.Errorf("two concurrent runs are both host uid %d, want each its own", seen[0])
	}
	for i, l := range runs {
		e := l.cancel(t).Enforced
		if e.HostUID != seen[i] || e.HostGID != seen[i] {
			t.Errorf("run %d: report host uid:gid %d:%d, want %d:%d as the kernel had it", i, e.HostUID, e.HostGID, seen[i], seen[i])
		}
		if want := "leased from " + uidlease.Default.String(); e.Identity.HostIDs != want {
			t.Errorf("run %d: identity.host_ids = %q, want %q", i, e.Identity.HostIDs, want)
		}
	}
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("tmp-root after the runs holds %v, want nothing", got)
	}
}

// TestUIDRangeRefused: a range that holds a reserved id or an account's
// or group's id is refused at the start (exit 125) with a message naming
// the id and its owner, nothing made; check reports the same conflict.
func TestUIDRangeRefused(t *testing.T) {
	requireRoot(t)
	a := newAccount(t)
	// A group of its own, of a gid no account has.
	gid := 3000000 + rand.IntN(1000000)
	group := fmt.Sprintf("sjt-g%d", gid)
	sysRun(t, "groupadd", "-g", strconv.Itoa(gid), group)
	t.Cleanup(func() { sysCleanup(t, "groupdel", group) })
	for _, c := range []struct {
		name  string
		rng   string
		wants []string
	}{
		{"root", "0-10", []string{"--uid-range", "includes id 0 (root)"}},
		{"nobody", "65530-65540", []string{"id 65534 (nobody"}},
		{"an account", fmt.Sprintf("%d-%d", a.UID, a.UID), []string{fmt.Sprintf("id %d of %q in /etc/passwd", a.UID, a.Name)}},
		{"a group", fmt.Sprintf("%d-%d", gid-5, gid+5), []string{fmt.Sprintf("id %d of %q in /etc/group", gid, group)}},
		{"not a range", "10-5", []string{"--uid-range", "FIRST-LAST"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := tmpRoot(t)
			r := runJail(t, runOpts{}, "run", "--id", "uid-bad", "--tmp-root", root, "--uid-range", c.rng, "--", "/bin/true")
			if r.code != 125 || r.report != nil {
				t.Fatalf("run --uid-range %s: exit %d, report %v; want 125 and none; %v", c.rng, r.code, r.report != nil, r)
			}
			for _, w := range c.wants {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("run --uid-range %s: stderr %q, want it to name %q", c.rng, r.stderr, w)
				}
			}
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("tmp-root after the refusal holds %v, want nothing", got)
			}
			if c.name == "not a range" {
				return
			}
			out, err := exec.Command(jailBin, "check", "--tmp-root", root, "--uid-range", c.rng).CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "MISSING  uids:") || !strings.Contains(string(out), c.wants[len(c.wants)-1]) {
				t.Errorf("check --uid-range %s: %v\n%s\nwant exit 1 and a MISSING uids line naming %q", c.rng, err, out, c.wants[len(c.wants)-1])
			}
		})
	}
}

// freeRange is a one-id range of the default's, drawn at random so that
// concurrent tests seldom meet.
func freeRange() string {
	id := uidlease.Default.First + 1 + rand.Uint32N(uint32(uidlease.Default.Size()-2))
	return fmt.Sprintf("%d-%d", id, id)
}

// TestUIDRangeFull: with its only id held by a running jail, a range
// gives a clear error (exit 125, nothing made); once the holder ends, and
// also when it was SIGKILLed, the id is leased again.
func TestUIDRangeFull(t *testing.T) {
	requireRoot(t)
	rng := freeRange()
	id, _ := strconv.Atoi(strings.Split(rng, "-")[0])
	root := tmpRoot(t)
	holder := startSleeper(t, root, "uid-holder", "--uid-range", rng)
	if uids, _ := holder.hostIDs(t); uids[0] != id {
		t.Fatalf("the holder is host uid %d, want %d, the range's only id", uids[0], id)
	}
	other := tmpRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "uid-full", "--tmp-root", other, "--uid-range", rng, "--", "/bin/true")
	if r.code != 125 || r.report != nil || !strings.Contains(r.stderr, "every id of the uid range is leased") || !strings.Contains(r.stderr, rng) {
		t.Errorf("run with the range full: exit %d, report %v, stderr %q; want 125, none, and the range named full", r.code, r.report != nil, r.stderr)
	}
	if got := entries(t, other); len(got) != 0 {
		t.Errorf("tmp-root after the refusal holds %v, want nothing", got)
	}

	// SIGKILL: the lease ends with the jail; its leftovers are gc's.
	holder.cmd.Process.Kill()
	holder.cmd.Wait()
	waitGone(t, holder.marker, 20*time.Second)
	r = runJail(t, runOpts{}, "run", "--id", "uid-after", "--tmp-root", other, "--uid-range", rng, "--", "/bin/true")
	wantStatus(t, r, report.StatusOK, 0)
	if r.report.Enforced.HostUID != id {
		t.Errorf("run after the holder was killed: host uid %d, want %d", r.report.Enforced.HostUID, id)
	}
	lock := filepath.Join(uidlease.LeaseDir, strconv.Itoa(id))
	if _, err := os.Stat(lock); err == nil {
		t.Errorf("lock file %s left after the last run ended, want it removed", lock)
	}

	// A killed jail's lock file is gc's too.
	again := startSleeper(t, root, "uid-again", "--uid-range", rng)
	again.hostIDs(t)
	again.cmd.Process.Kill()
	again.cmd.Wait()
	waitGone(t, again.marker, 20*time.Second)
	if out := gc(t, "--tmp-root", root); !strings.Contains(out, "removed "+lock+"\n") {
		t.Errorf("gc after a killed jail printed %q, want it to remove %s", out, lock)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Errorf("lock file %s left after gc, want it removed", lock)
	}
}

// childUIDs are the host uids of pid's children.
func childUIDs(t *testing.T, pid int) map[int]int {
	t.Helper()
	out := map[int]int{}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			st, err := os.ReadFile("/proc/" + c + "/status")
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(st), "\n") {
				if v, ok := strings.CutPrefix(line, "Uid:"); ok {
					n, _ := strconv.Atoi(strings.Fields(v)[0])
					id, _ := strconv.Atoi(c)
					out[id] = n
				}
			}
		}
	}
	return out
}

// TestServeSlotsLeaseOwnIDs: a served slot is, from the moment it is
// made, a host uid of its own from the range; the run that takes it runs
// as that uid, a run beside it as another; a request that fixes --uid and
// --gid gets them.
func TestServeSlotsLeaseOwnIDs(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	var slotUID int
	waitFor(t, func() bool {
		for pid, uid := range childUIDs(t, c.cmd.Process.Pid) {
			// Confined: the slot's last step before it is ready (its
			// main thread's seccomp filter); runs sent before it start
			// cold, and none would take the slot.
			if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); uid != 0 && strings.Contains(string(st), "\nSeccomp:\t2\n") {
				slotUID = uid
				return true
			}
		}
		return false
	}, "a slot's init, confined ahead")
	time.Sleep(50 * time.Millisecond) // its report of being ready, to the server's pool
	wantOwnID(t, "the slot's init", slotUID)
	// The reproduction: a process of nobody may not stop it.
	for pid, uid := range childUIDs(t, c.cmd.Process.Pid) {
		if uid == slotUID {
			out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "kill", "-STOP", strconv.Itoa(pid)).CombinedOutput()
			if err == nil {
				t.Errorf("uid 65534 stopped the slot's init %d (host uid %d), want it refused", pid, uid)
				syscall.Kill(pid, syscall.SIGCONT)
			} else if !strings.Contains(string(out), "ermi") {
				t.Errorf("kill -STOP of the slot's init as uid 65534: %v %q, want a permission error", err, out)
			}
		}
	}
	seen := twoServedRuns(t, c, root, "serve-uid-")
	starts := map[string]bool{}
	for i, name := range []string{"a", "b"} {
		c.send(map[string]any{"op": "cancel", "req": name})
		rep := c.await(name).report(t)
		if rep.Enforced.HostUID != seen[i] || rep.Enforced.HostGID != seen[i] {
			t.Errorf("served run %s: report host uid:gid %d:%d, want %d as the kernel had it", name, rep.Enforced.HostUID, rep.Enforced.HostGID, seen[i])
		}
		starts[rep.Start] = true
		if rep.Start == "slot" && seen[i] != slotUID {
			t.Errorf("served run %s took the slot of host uid %d, but ran as %d", name, slotUID, seen[i])
		}
	}
	if !starts["slot"] {
		t.Errorf("served runs started %v, want one from the slot", starts)
	}
	c.send(runReq("fixed", request.Request{ID: "serve-uid-fixed", Cwd: root, TmpRoot: root, UID: intp(4242), GID: intp(4243)}, "/bin/true"))
	if rep := c.await("fixed").report(t); rep.Status != report.StatusOK || rep.Enforced.HostUID != 4242 || rep.Enforced.HostGID != 4243 || rep.Enforced.Identity.HostIDs != "fixed by --uid and --gid" {
		t.Errorf("served run with --uid 4242 --gid 4243: %s, host %d:%d; want ok as 4242:4243", rep.Status, rep.Enforced.HostUID, rep.Enforced.HostGID)
	}
}

// TestRootlessKeepsCallerUID: rootless, the analysis is the caller's own
// uid whatever the range says (a real account, through setpriv).
func TestRootlessKeepsCallerUID(t *testing.T) {
	a := newAccount(t)
	tmp := a.tmpRootFor(t)
	rep := filepath.Join(tmp, "report.json")
	r := runAs(t, a.setpriv(jailBin, "run", "--id", "uid-rootless", "--tmp-root", tmp, "--report", rep,
		"--unsafe-disable", "cgroup", "--uid-range", "1000-2000", "--", "/bin/true"), rep)
	wantStatus(t, r, report.StatusOK, 0)
	if e := r.report.Enforced; e.HostUID != a.UID || e.HostGID != a.GID || e.Identity.HostIDs != "the caller's (rootless)" {
		t.Errorf("rootless run: host uid:gid %d:%d, want the caller's %d:%d", e.HostUID, e.HostGID, a.UID, a.GID)
	}
}

// TestServeColdRunsLeaseOwnIDs: served runs that start cold (a server
// with no slots) each lease a host uid of their own at their start: two
// at once are two uids, each as the report says, neither the range's
// first (the id a served run plans with before it knows whether it takes
// a slot: every cold run was once that uid, the same for all).
func TestServeColdRunsLeaseOwnIDs(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "0")
	seen := twoServedRuns(t, c, root, "serve-cold-uid-")
	for i, id := range seen {
		if id == int(uidlease.Default.First) {
			t.Errorf("cold served run %d is host uid %d, the range's first: the plan's placeholder, not a lease", i, id)
		}
	}
	for i, name := range []string{"a", "b"} {
		c.send(map[string]any{"op": "cancel", "req": name})
		rep := c.await(name).report(t)
		if rep.Start != "cold" || rep.Enforced.HostUID != seen[i] {
			t.Errorf("served run %s: started %s, report host uid %d, want cold as %d as the kernel had it", name, rep.Start, rep.Enforced.HostUID, seen[i])
		}
	}
}

// twoServedRuns sends two runs of /bin/sleep at once, named a and b (ids
// idPrefix+name), and returns the host uid each analysis has as the
// kernel says, each a lease of the default range and not the other's.
// The runs go on: the caller cancels them.
func twoServedRuns(t *testing.T, c *serveClient, root, idPrefix string) []int {
	t.Helper()
	var markers []string
	for _, name := range []string{"a", "b"} {
		m := marker(t)
		markers = append(markers, m)
		c.send(runReq(name, request.Request{ID: idPrefix + name, Cwd: root, TmpRoot: root}, "/bin/sleep", m))
	}
	var seen []int
	for _, m := range markers {
		uids, _ := (&leasedRun{marker: m}).hostIDs(t)
		wantOwnID(t, "served run "+m, uids[0])
		seen = append(seen, uids[0])
	}
	if seen[0] == seen[1] {
		t.Errorf("two concurrent served runs are both host uid %d, want each its own", seen[0])
	}
	return seen
}
