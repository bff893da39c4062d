package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// TestServeCleanupAfterReply: a served run's reply goes before its
// cleanup, and says so (cleanup "after_reply"); a one-shot run's report
// has no such field. A cleanup that then fails (here: a mount the test
// plants in the run directory's host anchor, which its removal cannot
// take) is a later "cleanup" event for that request, after its "done",
// logged by the server and counted in the next run's admission figures;
// what it left is gc's once the mount is gone.
func TestServeCleanupAfterReply(t *testing.T) {
	root := tmpRoot(t)
	base := "later" + strings.ReplaceAll(marker(t), ".", "")
	one := runJail(t, runOpts{}, "run", "--id", base+"-one", "--tmp-root", root, "--", "/bin/true")
	wantStatus(t, one, report.StatusOK, 0)
	if one.report.Cleanup != "" {
		t.Errorf("one-shot run: cleanup = %q, want none (its cleanup comes first)", one.report.Cleanup)
	}

	c := startServe(t, "--slots", "1")
	c.send(runReq("ok", request.Request{ID: base + "-ok", Cwd: root, TmpRoot: root}, "/bin/true"))
	if rep := c.await("ok").report(t); rep.Status != report.StatusOK || rep.Cleanup != report.CleanupAfterReply {
		t.Fatalf("served run: status %s, cleanup %q, want ok and %q", rep.Status, rep.Cleanup, report.CleanupAfterReply)
	}

	id := base + "-stuck"
	anchor := filepath.Join(root, runfiles.DirName(id))
	// The cancel must come once the analysis runs: one that comes while
	// the run is still being set up (a slot's run directory exists ahead)
	// ends it before it started, cleaned up before the reply.
	m := marker(t)
	c.send(runReq("stuck", request.Request{ID: id, Cwd: root, TmpRoot: root}, "/bin/sleep", m))
	if r := c.next(); r.Event != "accepted" {
		t.Fatalf("reply %+v, want accepted", r)
	}
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "the analysis to run")
	waitFor(t, func() bool { _, err := os.Stat(anchor); return err == nil }, "the run directory "+anchor)
	planted := filepath.Join(anchor, "planted")
	if err := os.Mkdir(planted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", planted, "tmpfs", 0, "size=4k"); err != nil {
		t.Fatalf("mount a tmpfs on %s: %v", planted, err)
	}
	t.Cleanup(func() {
		unix.Unmount(planted, unix.MNT_DETACH)
		gc(t, "--tmp-root", root)
	})
	c.send(map[string]any{"op": "cancel", "req": "stuck"})
	done := c.await("stuck")
	validReport(t, done.Report)
	if rep := done.report(t); rep.Status != report.StatusCancelled || rep.Cleanup != report.CleanupAfterReply {
		t.Errorf("cancelled run: status %s, cleanup %q, want cancelled and %q", rep.Status, rep.Cleanup, report.CleanupAfterReply)
	}
	if r := c.next(); r.Event != "cleanup" || r.Req != "stuck" || !strings.Contains(r.Error, anchor) {
		t.Errorf("reply after done = %+v, want a cleanup event for stuck naming %s", r, anchor)
	}

	c.send(runReq("next", request.Request{ID: base + "-next", Cwd: root, TmpRoot: root}, "/bin/true"))
	if s := c.await("next").report(t).Served; s == nil || s.CleanupsFailed != 1 {
		t.Errorf("next run: served = %+v, want cleanups_failed 1", s)
	}
	if !strings.Contains(c.stderr.String(), "request stuck: cleanup after the reply") {
		t.Errorf("server log = %q, want the failed cleanup of request stuck", c.stderr)
	}
	unix.Unmount(planted, unix.MNT_DETACH)
	gc(t, "--tmp-root", root)
	if _, err := os.Stat(anchor); !os.IsNotExist(err) {
		t.Errorf("after gc, %s: %v, want it gone", anchor, err)
	}
}
