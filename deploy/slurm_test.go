package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// The analyses the Slurm jobs run, as the platform's would be: Python
// scripts reading the checkout's data/ and writing into their run
// directory.
const (
	okScript = `import os
total = sum(int(x) for x in open(os.environ["SCIDEX_ROOT"] + "/data/numbers.txt").read().split())
with open("result.txt", "w") as f:
    f.write("%s %d\n" % (os.environ["SCIDEX_ANALYSIS_ID"], total))
`
	bombScript = `blocks = []
while True:
    blocks.append(bytearray(16 << 20))
`
	// sleepScript marks that it runs (its run directory is private; the
	// test sees the process) and waits to be stopped.
	sleepScript = `import time
time.sleep(600)
`
)

const (
	arrayTasks = 21 // 20 analyses and one memory bomb
	bombTask   = 10
)

// TestSlurm runs analyses as Slurm jobs through the example job script on
// a one-node cluster of its own: a job array whose reports are all ok and
// collected but for a memory bomb, which ends oom_killed and FAILED without
// touching the others; a job scancel'd while its analysis runs; and a job
// past its time limit. The jail's leaves sit below the cgroup the job runs
// in, which is slurmd's (Slurm makes no cgroup here), and nothing is left:
// no process, no leaf, no run directory.
func TestSlurm(t *testing.T) {
	requireRoot(t)
	slurmBefore := cgroupDirsNamed(t, "slurm")
	own, err := cgroupsOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	c := startCluster(t)
	work := sharedDir(t, "scidex-slurm-work-")
	root := filepath.Join(work, "platform")
	writeFile(t, filepath.Join(root, "data", "numbers.txt"), "1 2 3 4 5\n", 0o644)
	writeFile(t, filepath.Join(root, "docs", "README"), "docs\n", 0o644)
	scripts := filepath.Join(work, "scripts")
	writeFile(t, filepath.Join(scripts, "ok.py"), okScript, 0o644)
	writeFile(t, filepath.Join(scripts, "bomb.py"), bombScript, 0o644)
	writeFile(t, filepath.Join(scripts, "sleep.py"), sleepScript, 0o644)
	var lines []string
	for i := range arrayTasks {
		if i == bombTask {
			lines = append(lines, filepath.Join(scripts, "bomb.py")+" --memory 64M --grace 2s")
			continue
		}
		lines = append(lines, filepath.Join(scripts, "ok.py")+" --grace 2s")
	}
	writeFile(t, filepath.Join(work, "array.manifest"), strings.Join(lines, "\n")+"\n", 0o644)
	writeFile(t, filepath.Join(work, "sleep.manifest"), filepath.Join(scripts, "sleep.py")+" --grace 2s\n", 0o644)
	results := filepath.Join(work, "results")
	jobScript := filepath.Join(repoRoot, "examples", "slurm", "scidex-analyses.sbatch")

	submit := func(manifest string, extra ...string) string {
		args := append([]string{"--parsable", "--chdir", work, "--output", filepath.Join(work, "slurm-%A_%a.out"),
			"--export", "ALL,SCIDEX_JAIL=" + jailBin + ",SCIDEX_ROOT=" + root + ",SCIDEX_MANIFEST=" + manifest + ",SCIDEX_RESULTS=" + results},
			extra...)
		return strings.TrimSpace(c.run(t, "sbatch", append(args, jobScript)...))
	}
	// The time-limited job first: Slurm's limit is a whole minute, and it
	// runs while the rest does.
	limited := submit(filepath.Join(work, "sleep.manifest"), "--array=0", "--time=1")
	array := submit(filepath.Join(work, "array.manifest"), fmt.Sprintf("--array=0-%d", arrayTasks-1))
	cancelled := submit(filepath.Join(work, "sleep.manifest"), "--array=0")

	// While the scancel'd job's analysis runs: it sits in a leaf of the
	// jail below the cgroup the jail started in, which is slurmd's, which
	// is this test's: Slurm made no cgroup for the job.
	cancelID := c.jobs(t, cancelled)["0"]["JobId"] + "-0"
	var supervisor, analysis []int
	waitFor(t, 60*time.Second, "job "+cancelled+"'s analysis to run", func() bool {
		supervisor = testutil.ProcessesWith("run --id " + cancelID + " ")
		if len(supervisor) != 1 {
			return false
		}
		analysis = descendants(supervisor[0], "/usr/bin/python3")
		return len(analysis) == 1 && runDirExists(cancelID)
	})
	checkLeafBelowJob(t, own, supervisor[0], analysis, cancelID)
	c.run(t, "scancel", cancelled)

	arrayJobs := c.waitJobs(t, array, 5*time.Minute)
	cancelJobs := c.waitJobs(t, cancelled, 2*time.Minute)
	limitedJobs := c.waitJobs(t, limited, 4*time.Minute)

	if len(arrayJobs) != arrayTasks {
		t.Errorf("array job %s has %d tasks, want %d", array, len(arrayJobs), arrayTasks)
	}
	for task, j := range arrayJobs {
		id := j["JobId"] + "-" + task
		r := readReport(t, filepath.Join(results, id+".json"))
		if r == nil {
			continue
		}
		if task == fmt.Sprint(bombTask) {
			if r.Status != report.StatusOOMKilled || j["JobState"] != "FAILED" || j["ExitCode"] != "137:0" {
				t.Errorf("memory bomb %s: report status %s, Slurm %s exit %s; want oom_killed, FAILED, 137:0", id, r.Status, j["JobState"], j["ExitCode"])
			}
			continue
		}
		if r.Status != report.StatusOK || j["JobState"] != "COMPLETED" || j["ExitCode"] != "0:0" {
			t.Errorf("task %s: report status %s (%s), Slurm %s exit %s; want ok, COMPLETED, 0:0", id, r.Status, r.CompletionNotes, j["JobState"], j["ExitCode"])
		}
		got, err := os.ReadFile(filepath.Join(results, id, "result.txt"))
		if want := id + " 15\n"; err != nil || string(got) != want {
			t.Errorf("task %s: collected result.txt = %q, %v; want %q", id, got, err, want)
		}
	}
	for _, tc := range []struct {
		name, state string
		jobs        map[string]map[string]string
	}{{"scancel'd", "CANCELLED", cancelJobs}, {"past its time limit", "TIMEOUT", limitedJobs}} {
		j := tc.jobs["0"]
		id := j["JobId"] + "-0"
		if j["JobState"] != tc.state {
			t.Errorf("job %s (%s): Slurm state %s, want %s", id, tc.name, j["JobState"], tc.state)
		}
		if r := readReport(t, filepath.Join(results, id+".json")); r != nil && r.Status != report.StatusCancelled {
			t.Errorf("job %s (%s): report status %s (%s), want cancelled: the jail got Slurm's SIGTERM", id, tc.name, r.Status, r.CompletionNotes)
		}
	}

	// Nothing left behind by any job: no process, leaf or run directory.
	if pids := testutil.ProcessesWith(work); len(pids) > 0 {
		t.Errorf("processes of the jobs still running: %v", pids)
	}
	for _, jobs := range []map[string]map[string]string{arrayJobs, cancelJobs, limitedJobs} {
		for task, j := range jobs {
			id := j["JobId"] + "-" + task
			if runDirExists(id) {
				t.Errorf("run directory of %s left in /tmp", id)
			}
			if leaves := cgroupDirsNamed(t, "scidex-"+id+"-"); len(leaves) > 0 {
				t.Errorf("cgroup leaves of %s left: %v", id, leaves)
			}
		}
	}
	if after := cgroupDirsNamed(t, "slurm"); len(after) != len(slurmBefore) {
		t.Errorf("cgroups named slurm: %v before the cluster ran, %v after; want none made", slurmBefore, after)
	}
}

func runDirExists(id string) bool {
	_, err := os.Lstat(filepath.Join(os.TempDir(), "scidex-analysis-"+id))
	return err == nil
}

// checkLeafBelowJob: the jail (the job's main process, exec'd by the job
// script) is in the cgroups this test and slurmd are in, and the analysis
// in the jail's leaf directly below them.
func checkLeafBelowJob(t *testing.T, own map[string]string, supervisor int, analysis []int, id string) {
	t.Helper()
	sup, err := cgroupsOf(supervisor)
	if err != nil {
		t.Fatalf("cgroups of the jail (pid %d): %v", supervisor, err)
	}
	for h, p := range own {
		if sup[h] != p {
			t.Errorf("jail of %s in cgroup %s:%s, want the test's and slurmd's %s: Slurm moved the job", id, h, sup[h], p)
		}
	}
	for _, pid := range analysis {
		a, err := cgroupsOf(pid)
		if err != nil {
			t.Errorf("cgroups of the analysis (pid %d): %v", pid, err)
			continue
		}
		for _, h := range []string{"memory", "pids"} {
			ctl := ""
			for k := range sup {
				if strings.Contains(","+k+",", ","+h+",") {
					ctl = k
				}
			}
			if ctl == "" {
				continue // pure cgroup v2: checked below
			}
			if want := strings.TrimSuffix(sup[ctl], "/") + "/scidex-" + id + "-"; !strings.HasPrefix(a[ctl], want) {
				t.Errorf("analysis of %s (pid %d) in %s cgroup %s, want a leaf %s*", id, pid, ctl, a[ctl], want)
			}
		}
		if v2, ok := sup[""]; ok && a[""] != v2 && !strings.HasPrefix(a[""], strings.TrimSuffix(v2, "/")+"/") {
			t.Errorf("analysis of %s (pid %d) in cgroup v2 %s, want below the jail's %s", id, pid, a[""], v2)
		}
	}
}
