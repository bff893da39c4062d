package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeViewAhead: a slot builds its run's view ahead (its CPUs, its
// mounts, lo), and a run that takes it only names its run directory: its
// init phases have no "cpus" (a cold run's have), and it sees its own run
// directory, data dir and outputs. A slot serves only runs of its view: a
// data dir that appears in the root after the slot was made is not in
// its view, so the next run from that root starts cold (never in the
// stale slot) and sees the data dir; the server then makes its slots in
// that run's shape, and a later run takes one and sees the data dir too.
// A data dir replaced at its path (a new directory renamed in) is another
// view too: the run after it sees the new one.
func TestServeViewAhead(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	n := 0
	run := func(script string, limits map[string]string) (*report.Report, string) {
		t.Helper()
		n++
		fds, output := stdioPipes(t)
		req := "r" + strconv.Itoa(n)
		c.send(runReq(req, request.Request{ID: "ahead-" + req, Cwd: root, TmpRoot: root, Limits: limits}, "/bin/sh", "-c", script), fds...)
		rep := c.await(req).report(t)
		return rep, output()
	}
	initPhases := func(rep *report.Report) []string {
		var names []string
		for _, p := range rep.Phases {
			if p.Where == "init" {
				names = append(names, p.Name)
			}
		}
		return names
	}
	// Until one takes the slot (the pool is being filled).
	const show = "pwd; ls; echo x > out.txt; cat data/x.csv 2>/dev/null || echo no-data"
	var rep *report.Report
	var out string
	for range 40 {
		if rep, out = run(show, nil); rep.Start == "slot" {
			break
		}
		if ph := initPhases(rep); !slices.Contains(ph, "cpus") {
			t.Fatalf("a cold run's init phases %v lack cpus", ph)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rep.Start != "slot" {
		t.Fatalf("no run took a slot in 40 runs with --slots 1; server stderr: %s", c.stderr)
	}
	if ph := initPhases(rep); slices.Contains(ph, "cpus") || slices.Contains(ph, "network") {
		t.Errorf("a run from a slot: init phases %v, want no cpus or network (the slot's)", ph)
	}
	if want := filepath.Join(root, "scidex-analysis-ahead-r"+strconv.Itoa(n)) + "\nno-data\n"; rep.Status != report.StatusOK || out != want {
		t.Errorf("a run from a slot: %s, output %q, want ok and %q", rep.Status, out, want)
	}
	if len(rep.Outputs) != 1 || rep.Outputs[0].Path != "out.txt" {
		t.Errorf("a run from a slot: outputs %+v, want out.txt", rep.Outputs)
	}

	// The meminfo is the run's, written as it takes the slot: its memory
	// limit, not the template's (a memory limit sizes the disk budget and
	// /dev/shm too: a view of its own, made after the first such run).
	for range 40 {
		if rep, out = run("grep MemTotal /proc/meminfo", map[string]string{"memory": "123M"}); rep.Start == "slot" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if want := "MemTotal:         125952 kB\n"; rep.Start != "slot" || out != want {
		t.Errorf("a run from a slot with limits.memory 123M: start %s, %q, want slot and %q", rep.Start, out, want)
	}
	// A limit the view does not show is the run's all the same: written
	// over the slot's leaf as the run takes it.
	for range 40 {
		if rep, out = run("cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max", map[string]string{"memory": "123M", "pids": "77"}); rep.Start == "slot" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rep.Start != "slot" || out != "77\n" {
		t.Errorf("a run from a slot with limits.pids 77: start %s, %q, want slot and 77", rep.Start, out)
	}

	// A data dir appears: the ready slot's view lacks it.
	if err := os.Mkdir(filepath.Join(root, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "data", "x.csv"), []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The slot taken above is made anew, of the view without data/.
	waitFor(t, func() bool { return len(c.slots().added(t)) >= 1 }, "a slot")
	time.Sleep(200 * time.Millisecond)
	rep, out = run(show, nil)
	if rep.Start != "cold" || !strings.HasSuffix(out, "a,b\n") {
		t.Errorf("the first run with a data dir: start %s, output %q, want cold and the data dir's a,b", rep.Start, out)
	}
	for range 40 {
		if rep, out = run(show, nil); rep.Start == "slot" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rep.Start != "slot" || !strings.HasSuffix(out, "a,b\n") {
		t.Errorf("a later run with the data dir: start %s, output %q, want slot (made in its shape) and a,b; server stderr: %s", rep.Start, out, c.stderr)
	}

	// The data dir replaced by another at its path (renamed in): a slot
	// made before binds the old one, and must not serve.
	waitFor(t, func() bool { return len(c.slots().added(t)) >= 1 }, "a slot")
	time.Sleep(200 * time.Millisecond)
	data := filepath.Join(root, "data")
	if err := os.Mkdir(data+".new", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data+".new", "x.csv"), []byte("c,d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(data, data+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(data+".new", data); err != nil {
		t.Fatal(err)
	}
	if rep, out = run(show, nil); !strings.HasSuffix(out, "c,d\n") {
		t.Errorf("the first run after data/ was replaced: start %s, output %q, want the new data/'s c,d", rep.Start, out)
	}
}

// TestServeRunDirAhead: a slot makes its run's directory ahead (an anchor,
// a locked .new directory in the tmp-root of the slot's profile), and a
// run that takes the slot gets that very directory, renamed for it (here
// a run directory bound from the host, a disk budget of 0, whose inode the analysis
// sees); nothing of the anchors is left once the server has ended.
func TestServeRunDirAhead(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	// In the default tmp-root, then in the runs' (the slots follow
	// their shape).
	name := ".scidex-analysis-slot-" + strconv.Itoa(c.cmd.Process.Pid) + ".*.new"
	pattern := filepath.Join(os.TempDir(), name) + " or " + filepath.Join(root, name)
	glob := func() []string {
		a, _ := filepath.Glob(filepath.Join(os.TempDir(), name))
		b, _ := filepath.Glob(filepath.Join(root, name))
		return append(a, b...)
	}
	anchors := func() map[string]bool {
		inodes := map[string]bool{}
		names := glob()
		for _, n := range names {
			var st unix.Stat_t
			if unix.Stat(n, &st) == nil {
				inodes[strconv.FormatUint(st.Ino, 10)] = true
			}
		}
		return inodes
	}
	var start, inode string
	var ahead map[string]bool
	for i := range 40 {
		waitFor(t, func() bool { return len(anchors()) > 0 }, "a slot's run directory made ahead, "+pattern)
		ahead = anchors()
		fds, output := stdioPipes(t)
		req := "d" + strconv.Itoa(i)
		c.send(runReq(req, request.Request{ID: "anchor-" + req, Cwd: root, TmpRoot: root, Limits: map[string]string{"disk": "0"}}, "/usr/bin/stat", "-c", "%i", "."), fds...)
		start, inode = c.await(req).report(t).Start, strings.TrimSpace(output())
		if start == "slot" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if start != "slot" || !ahead[inode] {
		t.Errorf("run: start %s, run directory inode %s, want slot and one of the anchors made ahead %v", start, inode, ahead)
	}
	unix.Shutdown(c.fd, unix.SHUT_WR)
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("serve: %v; stderr: %s", err, c.stderr)
	}
	if left := glob(); len(left) != 0 {
		t.Errorf("after the server ended: %v, want no anchor left", left)
	}
}
