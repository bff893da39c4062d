package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// TestEveryAnalysisThreadConfined looks from the host at every thread of
// every process of a running analysis (a shell, its background children, a
// multi-threaded Python): each must be the unprivileged host uid with no
// capabilities, no_new_privs and the seccomp filter. The init confines only
// the thread that forks the analysis (raw per-thread system calls, no
// all-threads machinery); this is what shows the analysis never comes from
// one of its other threads.
func TestEveryAnalysisThreadConfined(t *testing.T) {
	requireRoot(t)
	marker := fmt.Sprintf("confined-%d", os.Getpid())
	script := `# ` + marker + `
import threading, time
ts = [threading.Thread(target=time.sleep, args=(3,)) for _ in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]`
	cmd, rep, out, errb := jailCmd(t, runOpts{}, "run", "--id", "confined", "--tmp-root", tmpRoot(t), "--",
		"/bin/sh", "-c", `/usr/bin/python3 -c "$1" & wait`, marker, script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var threads, most int
	deadline := time.Now().Add(10 * time.Second)
	for most < 6 && time.Now().Before(deadline) {
		threads = 0
		for _, p := range testutil.ProcessesWith(marker) {
			if p == cmd.Process.Pid {
				continue // the supervisor: its argv holds the marker too
			}
			pid := fmt.Sprint(p)
			tasks, _ := os.ReadDir(filepath.Join("/proc", pid, "task"))
			for _, task := range tasks {
				b, err := os.ReadFile(filepath.Join("/proc", pid, "task", task.Name(), "status"))
				if err != nil {
					continue // gone meanwhile
				}
				threads++
				checkConfined(t, pid+"/"+task.Name(), string(b))
			}
		}
		most = max(most, threads)
		time.Sleep(100 * time.Millisecond)
	}
	r := finishJail(t, cmd, cmd.Wait(), rep, out, errb)
	wantStatus(t, r, report.StatusOK, 0)
	if most < 6 {
		t.Errorf("saw at most %d threads of the analysis at once, want 6 (sh, python and its 4 threads)", most)
	}
}

func checkConfined(t *testing.T, which, status string) {
	t.Helper()
	got := map[string]string{}
	for _, l := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			got[k] = strings.TrimSpace(v)
		}
	}
	want := map[string]string{
		"CapEff": "0000000000000000", "CapPrm": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000", "CapInh": "0000000000000000",
		"NoNewPrivs": "1", "Seccomp": "2",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("thread %s (%s) of the analysis: %s = %q, want %q", which, got["Name"], k, got[k], w)
		}
	}
	// The run's own leased uid (uids_test.go), the same in all four.
	ids := strings.Fields(got["Uid"])
	if id, err := strconv.ParseUint(ids[0], 10, 32); len(ids) != 4 || slices.Min(ids) != slices.Max(ids) || err != nil || !uidlease.Default.Contains(id) {
		t.Errorf("thread %s (%s) of the analysis: Uid = %q, want one id of %s in all four", which, got["Name"], got["Uid"], uidlease.Default)
	}
}
