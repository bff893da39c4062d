package main

import (
	"bytes"
	"os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestSetupFailureWinsOverGo: the init applies Landlock on its config and,
// refused, reports why and exits, while the supervisor may be sending
// "go". The init's report is the run's failure: before, about one run in
// six of a burst said stage spawn, "send go to init: write sync: broken
// pipe" (the supervisor's write to the init that had just exited).
func TestSetupFailureWinsOverGo(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	const n = 30
	type started struct {
		cmd      *exec.Cmd
		rep      string
		out, err *bytes.Buffer
		runErr   error
	}
	runs := make([]started, n)
	var wg sync.WaitGroup
	for i := range runs {
		r := &runs[i]
		r.cmd, r.rep, r.out, r.err = jailCmd(t, runOpts{}, "run", "--id", "rwetc-"+strconv.Itoa(i), "--tmp-root", root, "--rw", "/etc", "--", "/usr/bin/true")
		wg.Add(1)
		go func() { defer wg.Done(); r.runErr = r.cmd.Run() }()
	}
	wg.Wait()
	results := make([]result, n)
	for i, r := range runs {
		results[i] = finishJail(t, r.cmd, r.runErr, r.rep, r.out, r.err)
	}
	for i, r := range results {
		wantStatus(t, r, report.StatusSetupError, 125)
		if got := r.report.SetupError; got == nil || got.Stage != "landlock" {
			t.Errorf("run %d of %d: setup error = %+v, want stage landlock (the init's refusal of rw /etc)", i, n, got)
		}
	}
}
