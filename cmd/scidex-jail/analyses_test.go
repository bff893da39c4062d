package main

// Real scientific analyses, end to end, through the built binary under the
// built-in profiles unmodified: the example script (numpy, pandas, scipy,
// matplotlib), multiprocessing, SQLite and flock, a Jupyter notebook, and a
// post-processing run over an earlier run's outputs; then each kind again
// under a limit tight enough to fail, where the report must say why.
//
// They need Debian's python3-numpy python3-pandas python3-scipy
// python3-matplotlib jupyter-nbconvert python3-ipykernel (for
// /usr/bin/python3). Python with pandas takes about a second to start and
// nbconvert several, so each kind runs once; the whole file takes ~15 s.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// TestAnalysisScriptThenPostProcess runs examples/analysis.py under the
// default profile, then examples/postprocess.py under post_process with the
// first run's collected outputs as --input: the platform's usual pipeline.
func TestAnalysisScriptThenPostProcess(t *testing.T) {
	requireRoot(t)
	ex := stageExamples(t)
	root := tmpRoot(t)
	first := newDir(t, "outputs")
	var firstRun result
	ok := t.Run("analysis", func(t *testing.T) {
		r := runJail(t, runOpts{}, "run", "--id", "analysis", "--tmp-root", root,
			"--root", ex.platform, "--ro", ex.dir, "--collect", first,
			"--", python, filepath.Join(ex.dir, "analysis.py"))
		wantStatus(t, r, report.StatusOK, 0)
		wantEnforced(t, r)
		firstRun = r
		if want := "samples: 300 from " + filepath.Join(ex.data, "measurements.csv"); !strings.Contains(r.stdout, want) {
			t.Errorf("stdout = %q, want it to hold %q", r.stdout, want)
		}
		files := wantCollected(t, r, first, "results.csv", "by_group.csv", "dose_response.png")
		if b := files["dose_response.png"]; !isPNG(b) {
			t.Errorf("dose_response.png starts %q, want the PNG signature %q", b[:min(len(b), 8)], pngMagic)
		}
		stats := csvValues(files["results.csv"])
		if n, _ := strconv.ParseFloat(stats["n"], 64); n != 300 {
			t.Errorf("results.csv n = %q, want 300", stats["n"])
		}
		// The data are generated with slope 0.021/µM and little noise.
		if s, _ := strconv.ParseFloat(stats["slope_per_um"], 64); s < 0.019 || s > 0.023 {
			t.Errorf("results.csv slope_per_um = %q, want about 0.021", stats["slope_per_um"])
		}
	})
	if !ok {
		return
	}

	t.Run("post_process", func(t *testing.T) {
		second := newDir(t, "summary")
		// The touch must fail: --input is read-only inside.
		script := python + ` "$0" "$1" && if touch "$1/written-by-post-process" 2>/dev/null; then echo input-is-writable; fi`
		r := runJail(t, runOpts{}, "run", "--id", "post", "--profile", "post_process", "--tmp-root", root,
			"--input", first, "--ro", ex.dir, "--collect", second,
			"--", "/bin/sh", "-c", script, filepath.Join(ex.dir, "postprocess.py"), first)
		wantStatus(t, r, report.StatusOK, 0)
		wantEnforced(t, r)
		if strings.Contains(r.stdout, "input-is-writable") {
			t.Errorf("the post-processing run could write into its --input %s", first)
		}
		if _, err := os.Lstat(filepath.Join(first, "written-by-post-process")); err == nil {
			t.Errorf("%s/written-by-post-process exists: --input was writable", first)
		}
		files := wantCollected(t, r, second, "summary.json", "summary.md")
		var sum struct {
			N     int  `json:"n"`
			PNG   bool `json:"plot_is_png"`
			Files []struct {
				Path   string `json:"path"`
				SHA256 string `json:"sha256"`
			} `json:"files"`
		}
		if err := json.Unmarshal(files["summary.json"], &sum); err != nil {
			t.Fatalf("summary.json: %v\n%s", err, files["summary.json"])
		}
		if sum.N != 300 || !sum.PNG || len(sum.Files) != 3 {
			t.Errorf("summary n, plot_is_png, files = %d, %v, %d; want 300, true, 3", sum.N, sum.PNG, len(sum.Files))
		}
		// What the post-processing read is what the first run's report
		// listed: the collected copies are the outputs, byte for byte.
		for _, f := range sum.Files {
			if o, _ := output(firstRun, f.Path); o.SHA256 != f.SHA256 {
				t.Errorf("summary sha256 of %s = %s, want %s from the first run's manifest", f.Path, f.SHA256, o.SHA256)
			}
		}
	})
}

// TestAnalysisPostProcessNeedsInput: the post_process profile refuses to
// start without an earlier run's outputs.
func TestAnalysisPostProcessNeedsInput(t *testing.T) {
	requireRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "post", "--profile", "post_process", "--tmp-root", tmpRoot(t), "--", "/bin/true")
	if r.code != 125 || !strings.Contains(r.stderr, "--input") {
		t.Errorf("post_process without --input = %v; want exit 125 and a message naming --input", r)
	}
}

// TestAnalysisMultiprocessing runs pools under fork, spawn and forkserver,
// a queue and lock between spawned processes, and shared memory.
func TestAnalysisMultiprocessing(t *testing.T) {
	requireRoot(t)
	ex := stageExamples(t)
	r := runJail(t, runOpts{}, "run", "--id", "pool", "--tmp-root", tmpRoot(t), "--ro", ex.scripts,
		"--", python, filepath.Join(ex.scripts, "parallel.py"))
	wantStatus(t, r, report.StatusOK, 0)
	wantEnforced(t, r)
	want := "fork: ok\nspawn: ok\nforkserver: ok\nqueue: [0, 10]\nshared_memory: hello\n"
	if r.stdout != want {
		t.Errorf("parallel.py stdout = %q, want %q; %v", r.stdout, want, r)
	}
}

// TestAnalysisSQLiteLocks runs two concurrent SQLite writers and an flock
// check in the run directory, on its tmpfs and on the host's filesystem
// (--disk 0), in both of SQLite's journal modes: WAL also maps a -shm file.
func TestAnalysisSQLiteLocks(t *testing.T) {
	requireRoot(t)
	ex := stageExamples(t)
	root := tmpRoot(t)
	cases := []struct {
		name    string
		disk    []string // the default: a tmpfs run directory
		journal string
	}{
		{"tmpfs run directory, rollback journal", nil, "delete"},
		{"tmpfs run directory, WAL", nil, "wal"},
		{"host directory, rollback journal", []string{"--disk", "0"}, "delete"},
		{"host directory, WAL", []string{"--disk", "0"}, "wal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--id", "sqlite", "--tmp-root", root, "--ro", ex.scripts}, c.disk...)
			args = append(args, "--", python, filepath.Join(ex.scripts, "sqlite_locks.py"), c.journal)
			r := runJail(t, runOpts{}, args...)
			wantStatus(t, r, report.StatusOK, 0)
			wantEnforced(t, r)
			want := "journal: " + c.journal + "\nrows: 400 distinct counts: 400 exit codes: [0, 0]\nintegrity: ok\nflock: busy\nflock: acquired after release\n"
			if r.stdout != want {
				t.Errorf("sqlite_locks.py %s stdout = %q, want %q; %v", c.journal, r.stdout, want, r)
			}
			if o, ok := output(r, "results.db"); !ok || o.Type != "file" || o.SHA256 == "" {
				t.Errorf("manifest results.db = %+v (found %v), want a hashed file", o, ok)
			}
		})
	}
}

// TestAnalysisNotebook executes examples/notebook.ipynb with nbconvert
// under the notebook profile: the kernel and nbconvert talk over loopback.
func TestAnalysisNotebook(t *testing.T) {
	requireRoot(t)
	ex := stageExamples(t)
	collect := newDir(t, "outputs")
	r := runJail(t, runOpts{}, "run", "--id", "notebook", "--profile", "notebook", "--tmp-root", tmpRoot(t),
		"--root", ex.platform, "--ro", ex.dir, "--env", "SCIDEX_DATA_DIR="+ex.data, "--collect", collect,
		"--", "/bin/sh", "-c", nbconvert, filepath.Join(ex.dir, "notebook.ipynb"))
	wantStatus(t, r, report.StatusOK, 0)
	wantEnforced(t, r)
	if r.report.Enforced.Net != "loopback" {
		t.Errorf("enforced net = %q, want loopback (the notebook profile)", r.report.Enforced.Net)
	}
	files := wantCollected(t, r, collect, "executed.ipynb")
	var nb notebook
	if err := json.Unmarshal(files["executed.ipynb"], &nb); err != nil {
		t.Fatalf("executed.ipynb: %v", err)
	}
	if nb.NBFormat != 4 {
		t.Errorf("executed.ipynb nbformat = %d, want 4", nb.NBFormat)
	}
	var code, stream, png int
	for _, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		code++
		if c.ExecutionCount == nil {
			t.Errorf("code cell %d has no execution_count: it did not run", code)
		}
		for _, o := range c.Outputs {
			if o.OutputType == "error" {
				t.Errorf("code cell %d raised: %s", code, o.Text)
			}
			if o.OutputType == "stream" && strings.Contains(string(o.Text), "300 samples") {
				stream++
			}
			if _, ok := o.Data["image/png"]; ok {
				png++
			}
		}
	}
	if code != 3 || stream != 1 || png != 1 {
		t.Errorf("executed.ipynb code cells, '300 samples' streams, PNG outputs = %d, %d, %d; want 3, 1, 1", code, stream, png)
	}
}

// nbconvert is the notebook run's shell command ($0 is the notebook): the
// notebook is copied into the run directory first, because nbconvert
// writes next to its input and the input's directory is read-only.
const nbconvert = `cp "$0" notebook.ipynb && jupyter nbconvert --to notebook --execute --output-dir . --output executed notebook.ipynb`

// notebook is the part of nbformat 4 the test reads.
type notebook struct {
	NBFormat int `json:"nbformat"`
	Cells    []struct {
		CellType       string `json:"cell_type"`
		ExecutionCount *int   `json:"execution_count"`
		Outputs        []struct {
			OutputType string                     `json:"output_type"`
			Text       json.RawMessage            `json:"text"`
			Data       map[string]json.RawMessage `json:"data"`
		} `json:"outputs"`
	} `json:"cells"`
}

// TestAnalysisLimits runs the same kinds of analysis under limits too tight
// for them. Each must end with the status naming the limit, the usage that
// proves it, and notes a person can act on.
// anyCode in a limits case: the exit code depends on which process the
// kernel picked, the status does not.
const anyCode = -1

func TestAnalysisLimits(t *testing.T) {
	requireRoot(t)
	ex := stageExamples(t)
	script := []string{"--root", ex.platform, "--ro", ex.dir, "--", python, filepath.Join(ex.dir, "analysis.py")}
	cases := []struct {
		name   string
		args   []string
		status report.Status
		code   int
		notes  string
		usage  func(u *report.CgroupUsage) bool
	}{
		{
			// pandas, scipy and matplotlib alone need more than 48 MiB: the
			// cgroup's OOM killer, not a MemoryError, ends the run.
			name: "pandas script in 48M", args: append([]string{"--memory", "48M"}, script...),
			status: report.StatusOOMKilled, code: 128 + 9, notes: "out of memory",
			usage: func(u *report.CgroupUsage) bool { return u.OOMKills > 0 },
		},
		{
			// The PNG alone is 41 KiB; matplotlib's font cache comes first.
			name: "script writing past a 64K disk", args: append([]string{"--disk", "64K"}, script...),
			status: report.StatusDiskLimit, code: 1, notes: "run directory budget",
		},
		{
			// The limit counts threads: the jail's init (a Go runtime) holds
			// about 8, Python 1, and the pool's fork fails well before 64.
			name: "pool of 64 under 32 pids", args: []string{"--pids", "32", "--ro", ex.scripts, "--", python, filepath.Join(ex.scripts, "parallel.py"), "64"},
			status: report.StatusPIDsLimit, code: 1, notes: "limit of 32 processes",
			usage: func(u *report.CgroupUsage) bool { return u.PIDsLimitHits > 0 },
		},
		{
			// nbconvert needs several seconds; sh, which does not handle
			// SIGTERM, dies of it at once, before the grace runs out.
			name: "notebook in 2s",
			args: []string{"--profile", "notebook", "--timeout", "2s", "--root", ex.platform, "--ro", ex.dir, "--env", "SCIDEX_DATA_DIR=" + ex.data,
				"--", "/bin/sh", "-c", nbconvert, filepath.Join(ex.dir, "notebook.ipynb")},
			status: report.StatusTimeout, code: 128 + 15, notes: "2s wall-clock timeout",
		},
		{
			// Python's default SIGTERM action ends it: 128+15.
			name: "script in 300ms", args: append([]string{"--timeout", "300ms"}, script...),
			status: report.StatusTimeout, code: 128 + 15, notes: "300ms wall-clock timeout",
		},
		{
			// Workers that never finish: the timeout, not the speed of
			// the machine, ends this run.
			name: "pool in 300ms", args: []string{"--timeout", "300ms", "--", python, "-c",
				"import multiprocessing as mp, time\nwith mp.Pool(2) as p: p.map(time.sleep, [1000, 1000])"},
			status: report.StatusTimeout, code: 128 + 15, notes: "300ms wall-clock timeout",
		},
		{
			// Jupyter's client and kernel together need far more than
			// 64 MiB; which process the OOM killer picks, and so the exit
			// code, varies: the status must not.
			name: "notebook in 64M",
			args: []string{"--profile", "notebook", "--memory", "64M", "--root", ex.platform, "--ro", ex.dir, "--env", "SCIDEX_DATA_DIR=" + ex.data,
				"--", "/bin/sh", "-c", nbconvert, filepath.Join(ex.dir, "notebook.ipynb")},
			status: report.StatusOOMKilled, code: anyCode, notes: "out of memory",
			usage: func(u *report.CgroupUsage) bool { return u.OOMKills > 0 },
		},
	}
	root := tmpRoot(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := uniqueID(t, "limits")
			r := runJail(t, runOpts{}, append([]string{"run", "--id", id, "--tmp-root", root}, c.args...)...)
			if c.code == anyCode {
				if r.report == nil || r.report.Status != c.status || r.code != r.report.ExitCode {
					t.Fatalf("status = %v, want %s with the report's exit code; %v", r.report, c.status, r)
				}
			} else {
				wantStatus(t, r, c.status, c.code)
			}
			wantEnforced(t, r)
			if !strings.Contains(r.report.CompletionNotes, c.notes) {
				t.Errorf("completion notes = %q, want them to say %q", r.report.CompletionNotes, c.notes)
			}
			if c.usage != nil && (r.report.Enforced.Cgroup.Usage == nil || !c.usage(r.report.Enforced.Cgroup.Usage)) {
				t.Errorf("cgroup usage = %+v, does not show the limit was hit", r.report.Enforced.Cgroup.Usage)
			}
			// Every process of the run is gone when the jail has exited,
			// Jupyter's kernel too (its command line holds the run directory).
			waitGone(t, runfiles.DirPrefix+id, 0)
		})
	}
}

// TestAnalysisSmallestPIDLimitStartsTarget: the smallest --pids the jail
// accepts must be enough to start a target; a limit the init alone uses up
// should be refused up front, not fail at exec as "cannot execute" (126).
// Repeated because the init's thread count varies from run to run.
func TestAnalysisSmallestPIDLimitStartsTarget(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	for i := range 5 {
		r := runJail(t, runOpts{}, "run", "--id", "minpids", "--tmp-root", root, "--pids", "8", "--", "/bin/true")
		if r.report == nil && r.code == 125 && strings.Contains(r.stderr, "--pids") {
			return // refused as a bad spec: also correct
		}
		if r.report == nil || r.report.Status != report.StatusOK {
			notes := ""
			if r.report != nil {
				notes = r.report.CompletionNotes
			}
			t.Fatalf("run %d with --pids 8 (accepted by the jail) = %v\nnotes: %s\nwant /bin/true to run, or --pids 8 refused before the run", i, r, notes)
		}
	}
}
