package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkMemory runs `scidex-jail run -- /usr/bin/cat` with stdin a pipe
// we hold: the target runs for exactly as long as we sample, with no sleep
// to guess. Once cat runs, it reads the supervisor's and the init's memory,
// then closes the pipe and the run ends with status ok.
//
// What the resident size is made of, per process: RssFile, pages of the
// binary mapped (shared with the page cache and every other jail process;
// the kernel maps 64 kB around each page touched, so it follows how much
// of the binary's code runs, package initialisers included, more than its
// size), RssAnon (heap, stacks, written data: the process's own), Pss (each
// shared page divided among the processes mapping it), Private (pages no
// other process maps: what one more run costs) and the thread count.
func BenchmarkMemory(b *testing.B) {
	d := newDirs(b)
	var sums map[string]float64
	for range b.N {
		m, err := sampleRun(d)
		if err != nil {
			b.Fatal(err)
		}
		if sums == nil {
			sums = map[string]float64{}
		}
		for k, v := range m {
			sums[k] += float64(v)
		}
	}
	for k, v := range sums {
		b.ReportMetric(v/float64(b.N), k)
	}
	rss := sums["init-VmRSS-kB"] / float64(b.N) / 1024
	memLine = fmt.Sprintf("%-24s %.2f MB (VmRSS, mean of %d)  target <= %.1f MB: %s", "init resident size", rss, b.N, initRSSTargetMB, metOrNot(rss <= initRSSTargetMB))
}

// initRSSTargetMB is issue 25's bound on the init's resident size.
const initRSSTargetMB = 2.5

// memLine is BenchmarkMemory's summary, printed with the pairs'.
var memLine string

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// memFields are the /proc/<pid>/status lines reported. RssAnon is the part
// a memory cgroup charges for sure; file pages of the binary are shared
// with the page cache.
var memFields = []string{"VmRSS", "VmHWM", "RssAnon", "RssFile"}

// rollupFields are the /proc/<pid>/smaps_rollup lines reported; Private is
// their Private_Clean plus Private_Dirty.
var rollupFields = []string{"Pss", "Private_Clean", "Private_Dirty"}

func sampleRun(d dirs) (map[string]int64, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	defer pw.Close()
	j := newJailCmd(d, newID("mem"), nil, "/usr/bin/cat")
	j.Cmd.Stdin = pr
	if err := j.Cmd.Start(); err != nil {
		pr.Close()
		return nil, fmt.Errorf("start jail: %w", err)
	}
	pr.Close()
	sup := j.Cmd.Process.Pid
	out := map[string]int64{}
	initPid, err := waitForTarget(sup, "cat")
	if err == nil {
		for who, pid := range map[string]int{"supervisor": sup, "init": initPid} {
			var m map[string]int64
			if m, err = readStatus(pid); err != nil {
				break
			}
			for _, f := range memFields {
				out[who+"-"+f+"-kB"] = m[f]
			}
			out[who+"-Pss-kB"] = m["Pss"]
			out[who+"-Private-kB"] = m["Private_Clean"] + m["Private_Dirty"]
			out[who+"-threads"] = m["Threads"]
		}
	}
	pw.Close()
	_, ferr := j.Finish(j.Cmd.Wait(), "")
	if err != nil {
		return nil, err
	}
	return out, ferr
}

// waitForTarget finds the init (the supervisor's only child) and waits
// until its child has exec'ed comm. The deadline only guards against a hung
// run; nothing is measured against it.
func waitForTarget(sup int, comm string) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, in := range children(sup) {
			for _, t := range children(in) {
				c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", t))
				if strings.TrimSpace(string(c)) == comm {
					return in, nil
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	return 0, fmt.Errorf("no %s under the init of supervisor %d after 30s; its children: %v", comm, sup, children(sup))
}

// children lists pid's child processes over all its threads (a Go program
// forks from whichever thread runs the goroutine).
func children(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// readStatus reads the memory lines of pid's status and smaps_rollup, and
// its thread count ("Threads").
func readStatus(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	m := parseStatusKB(string(b))
	for _, f := range memFields {
		if _, ok := m[f]; !ok {
			return nil, fmt.Errorf("/proc/%d/status has no %s line", pid, f)
		}
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			m["Threads"], err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if m["Threads"] == 0 {
		return nil, fmt.Errorf("/proc/%d/status has no thread count (%v)", pid, err)
	}
	b, err = os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return nil, fmt.Errorf("read smaps_rollup of pid %d: %w", pid, err)
	}
	r := parseStatusKB(string(b))
	for _, f := range rollupFields {
		v, ok := r[f]
		if !ok {
			return nil, fmt.Errorf("/proc/%d/smaps_rollup has no %s line", pid, f)
		}
		m[f] = v
	}
	return m, nil
}

// parseStatusKB reads the "Name:   123 kB" lines of /proc/<pid>/status (or
// smaps_rollup, which has the same form).
func parseStatusKB(status string) map[string]int64 {
	m := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}
