package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
)

// hostileDeadline bounds one hostile run: generous, only so that a jail
// that does not stop fails the test instead of hanging it. How long a case
// takes is the benchmark's to say (bench/hostile_bench_test.go).
const hostileDeadline = 60 * time.Second

// hostileRun is one run of a hostile analysis through the real binary.
type hostileRun struct {
	result
	id       string
	root     string // the tmp-root, 1777, also holding the report
	out      string // the collect directory, "" without --collect
	rootless bool
	reportSz int64
}

// hostileCmd is the jail's command for a run of script (python3 -c) in
// root, as root or, rootless, as uid 65534 with the cgroup layer off by
// name (no delegated cgroup for that user here), as TestRootlessRun does.
func hostileCmd(ctx context.Context, t *testing.T, rootless, collect bool, extra []string, script string) (*exec.Cmd, *hostileRun) {
	t.Helper()
	h := &hostileRun{id: runID(t, "hostile"), root: tmpRoot(t), rootless: rootless}
	if err := os.Chmod(h.root, 0o1777); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--id", h.id, "--tmp-root", h.root, "--report", filepath.Join(h.root, "report.json")}
	if collect {
		h.out = filepath.Join(h.root, "out")
		args = append(args, "--collect", h.out)
	}
	if rootless {
		args = append(args, "--unsafe-disable", "cgroup")
	}
	args = append(append(args, extra...), "--", "python3", "-c", script)
	cmd := exec.CommandContext(ctx, jailBin, args...)
	if rootless {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	return cmd, h
}

// runHostile runs script to the end and checks what every run must give:
// a report, delivered and true (every file it says was hashed is in the
// collect directory with that sha256, and nothing else is), an exit
// status that matches it, and nothing left behind.
func runHostile(t *testing.T, rootless, collect bool, extra []string, script string) *hostileRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostileDeadline)
	defer cancel()
	cmd, h := hostileCmd(ctx, t, rootless, collect, extra, script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the jail did not end within %s: %v\n%s", hostileDeadline, err, errb.String())
	}
	h.finish(t, cmd, err, &out, &errb)
	return h
}

func (h *hostileRun) finish(t *testing.T, cmd *exec.Cmd, err error, out, errb *bytes.Buffer) {
	t.Helper()
	rep := filepath.Join(h.root, "report.json")
	h.result = finishJail(t, cmd, err, rep, out, errb)
	if h.report == nil {
		t.Fatalf("no report delivered; %v", h.result)
	}
	if fi, err := os.Stat(rep); err == nil {
		h.reportSz = fi.Size()
	}
	if h.code != h.report.ExitCode {
		t.Errorf("exit status %d, report's exit_code %d, want them equal", h.code, h.report.ExitCode)
	}
	h.wantTrue(t)
	h.wantNothingLeft(t)
}

// wantTrue: the report says what the run directory held, and what was
// collected is what it says was hashed, whole; a file not hashed, or hashed
// and not copied, says why.
func (h *hostileRun) wantTrue(t *testing.T) {
	t.Helper()
	hashed := map[string]string{}
	whole := map[string]bool{} // hashed, and not skipped for copying
	for _, o := range h.report.Outputs {
		p := o.Path
		if o.PathB64 != "" {
			b, err := base64.StdEncoding.DecodeString(o.PathB64)
			if err != nil {
				t.Fatalf("output %q: path_b64 %q: %v", o.Path, o.PathB64, err)
			}
			p = string(b)
		}
		if o.Type == "file" && o.SHA256 == "" && o.Skipped == "" {
			t.Errorf("output %q: no sha256 and nothing skipped: want one or the other", p)
		}
		if o.SHA256 != "" {
			hashed[p] = o.SHA256
		}
		if o.SHA256 != "" && o.Skipped == "" {
			whole[p] = true
		}
	}
	if h.out == "" || h.report.Status == report.StatusCancelled {
		return
	}
	collected := map[string]string{}
	filepath.WalkDir(h.out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(h.out, p)
		collected[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	for p, sum := range collected {
		if hashed[p] != sum {
			t.Errorf("collected %q with sha256 %s, report says %q", p, sum, hashed[p])
		}
	}
	if h.report.Status != report.StatusDeliveryFailed {
		for p := range whole {
			if _, ok := collected[p]; !ok {
				t.Errorf("report lists %q as hashed, not in the collect directory", p)
			}
		}
	}
}

// wantNothingLeft: the tmp-root holds the report and the collect
// directory only; no cgroup leaf of the run is left.
func (h *hostileRun) wantNothingLeft(t *testing.T) {
	t.Helper()
	for _, e := range entries(t, h.root) {
		if e != "report.json" && e != "out" {
			t.Errorf("tmp-root holds %q after the run, want only the report and the collect directory", e)
		}
	}
	if !h.rootless {
		wantNoLeaf(t, h.id, h.result)
	}
}

// paths are the exact names of the outputs.
func (h *hostileRun) paths() []string {
	var ps []string
	for _, o := range h.report.Outputs {
		p := o.Path
		if b, err := base64.StdEncoding.DecodeString(o.PathB64); o.PathB64 != "" && err == nil {
			p = string(b)
		}
		ps = append(ps, p)
	}
	return ps
}

func (h *hostileRun) output(path string) (report.Output, bool) {
	i := slices.Index(h.paths(), path)
	if i < 0 {
		return report.Output{}, false
	}
	return h.report.Outputs[i], true
}

func (h *hostileRun) String() string {
	b, _ := json.Marshal(h.report.Outputs)
	if len(b) > 2000 {
		b = append(b[:2000], "..."...)
	}
	return h.result.String() + "\nnotes: " + h.report.CompletionNotes + "\noutputs: " + string(b)
}

// modes are the two ways every hostile case runs.
var modes = []struct {
	name     string
	rootless bool
}{{"root", false}, {"rootless", true}}
