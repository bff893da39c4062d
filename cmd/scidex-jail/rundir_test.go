package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

func TestRunDirectoryLifecycle(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "life", "--tmp-root", root, "--", "/bin/sh", "-c", "echo data > out.txt; mkdir sub; echo x > sub/y")
	wantStatus(t, r, report.StatusOK, 0)
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("tmp-root after the run holds %v, want nothing", got)
	}
	if len(r.report.Outputs) != 3 {
		t.Errorf("outputs = %+v, want out.txt, sub, sub/y", r.report.Outputs)
	}
	for _, o := range r.report.Outputs {
		if o.Path == "out.txt" && (o.Size != 5 || o.SHA256 != "6667b2d1aab6a00caa5aee5af8ad9f1465e567abf1c209d15727d57b3e8f6e5f") {
			t.Errorf("out.txt = %+v, want size 5 and the sha256 of \"data\\n\"", o)
		}
	}

	r = runJail(t, runOpts{}, "run", "--id", "kept", "--tmp-root", root, "--keep", "--", "/bin/sh", "-c", "echo k > kept.txt")
	wantStatus(t, r, report.StatusOK, 0)
	dir := filepath.Join(root, "scidex-analysis-kept")
	if b, err := os.ReadFile(filepath.Join(dir, "kept.txt")); err != nil || string(b) != "k\n" {
		t.Errorf("with --keep, kept.txt = %q, %v; want \"k\\n\"", b, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("run directory mode = %v, %v; want 0700", fi.Mode(), err)
	}
	// A kept directory is a leftover for the next run with that ID: it is
	// not locked, so it is cleaned up and the run goes ahead.
	r = runJail(t, runOpts{}, "run", "--id", "kept", "--tmp-root", root, "--", "/bin/sh", "-c", "ls")
	wantStatus(t, r, report.StatusOK, 0)
	if r.stdout != "" {
		t.Errorf("a fresh run directory holds %q, want nothing", r.stdout)
	}
	if len(r.report.Warnings) == 0 {
		t.Errorf("report warnings are empty, want a note about the removed leftover")
	}
}

func TestPlantedSymlinkRefused(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, "precious"), []byte("keep me"), 0o644)
	link := filepath.Join(root, "scidex-analysis-planted")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	r := runJail(t, runOpts{}, "run", "--id", "planted", "--tmp-root", root, "--", "/bin/sh", "-c", "rm -rf ./*; echo pwned > x")
	if r.code != 125 || !strings.Contains(r.stderr, "not a directory") {
		t.Errorf("run over a planted symlink: %v; want exit 125 saying it is not a directory", r)
	}
	if got := entries(t, victim); len(got) != 1 || got[0] != "precious" {
		t.Errorf("link target now holds %v, want only precious", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("planted link was changed: %v, %v", fi, err)
	}
	if got := entries(t, root); len(got) != 1 {
		t.Errorf("tmp-root holds %v, want only the planted link", got)
	}
	// A directory of another user is refused too.
	os.Remove(link)
	os.Mkdir(link, 0o700)
	os.Chown(link, 4242, 4242)
	r = runJail(t, runOpts{}, "run", "--id", "planted", "--tmp-root", root, "--", "/bin/true")
	if r.code != 125 || !strings.Contains(r.stderr, "belongs to uid 4242") {
		t.Errorf("run over another user's directory: %v; want exit 125 naming the owner", r)
	}
}

func TestTargetSymlinksNotFollowed(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	victim := t.TempDir()
	os.Chmod(victim, 0o755)
	secret := filepath.Join(victim, "secret")
	os.WriteFile(secret, []byte("host secret"), 0o644)
	collectDir := filepath.Join(t.TempDir(), "collected")
	script := fmt.Sprintf("ln -s %s dirlink; ln -s %s filelink; ln -s /etc/passwd passwd; echo ok > real.txt", victim, secret)
	r := runJail(t, runOpts{}, "run", "--id", "links", "--tmp-root", root, "--collect", collectDir, "--", "/bin/sh", "-c", script)
	wantStatus(t, r, report.StatusOK, 0)
	if b, err := os.ReadFile(secret); err != nil || string(b) != "host secret" {
		t.Errorf("after cleanup the link target = %q, %v; want untouched", b, err)
	}
	if got := entries(t, collectDir); len(got) != 1 || got[0] != "real.txt" {
		t.Errorf("collected %v, want only real.txt", got)
	}
	types := map[string]report.OutputType{}
	for _, o := range r.report.Outputs {
		types[o.Path] = o.Type
	}
	for _, p := range []string{"dirlink", "filelink", "passwd"} {
		if types[p] != "symlink" {
			t.Errorf("output %s listed as %q, want symlink", p, types[p])
		}
	}
}

func TestConcurrentDuplicateRefused(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cmd, wait := startJail(t, "run", "--id", "dup", "--tmp-root", root, "--", "/bin/sh", "-c", "echo ready; while :; do sleep 0.05; done")
	_ = cmd
	r := runJail(t, runOpts{}, "run", "--id", "dup", "--tmp-root", root, "--", "/bin/true")
	if r.code != 125 || !strings.Contains(r.stderr, "still in progress") {
		t.Errorf("second run with the same ID: %v; want exit 125 saying it is in progress", r)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	first := wait()
	wantStatus(t, first, report.StatusCancelled, 128+15)
}

func TestParallelRuns(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	var wg sync.WaitGroup
	results := make([]result, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runJail(t, runOpts{}, "run", "--id", fmt.Sprintf("par-%d", i), "--tmp-root", root, "--", "/bin/sh", "-c", "echo $SCIDEX_ANALYSIS_ID > id; cat id")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if want := fmt.Sprintf("par-%d\n", i); r.code != 0 || r.stdout != want {
			t.Errorf("run %d: %v; want exit 0 printing %q", i, r, want)
		}
	}
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("tmp-root after 20 runs holds %v, want nothing", got)
	}
}

func TestBadInput(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"empty id", []string{"--id", "", "--", "true"}, "--id is empty"},
		{"dotdot id", []string{"--id", "a..b", "--", "true"}, "'..'"},
		{"slash id", []string{"--id", "a/b", "--", "true"}, "may hold only"},
		{"space id", []string{"--id", "a b", "--", "true"}, "may hold only"},
		{"long id", []string{"--id", strings.Repeat("x", 129), "--", "true"}, "at most 128"},
		{"no id", []string{"--", "true"}, "--id"},
		{"no command", []string{"--id", "ok"}, "no command"},
		{"relative tmp-root", []string{"--id", "ok", "--tmp-root", "tmp", "--", "true"}, "absolute"},
		{"missing tmp-root", []string{"--id", "ok", "--tmp-root", "/nonexistent/dir", "--", "true"}, "does not exist"},
		{"bad env", []string{"--id", "ok", "--env", "NOEQUALS", "--", "true"}, "NAME=VALUE"},
		{"bad timeout", []string{"--id", "ok", "--timeout", "soon", "--", "true"}, "--timeout"},
		{"negative timeout", []string{"--id", "ok", "--timeout=-1s", "--", "true"}, "negative"},
		{"root uid", []string{"--id", "ok", "--uid", "0", "--gid", "0", "--", "true"}, "non-zero"},
		{"uid without gid", []string{"--id", "ok", "--uid", "4242", "--", "true"}, "--uid and --gid go together"},
		{"unknown flag", []string{"--id", "ok", "--frobnicate", "--", "true"}, "frobnicate"},
		{"report dir missing", []string{"--id", "ok", "--report", "/nonexistent/r.json", "--", "true"}, "--report"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--tmp-root", root}, c.args...)
			cmd := exec.Command(jailBin, args...)
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != 125 || !strings.Contains(string(out), c.want) {
				t.Errorf("scidex-jail %q = exit %d, %q; want exit 125 mentioning %q", args, cmd.ProcessState.ExitCode(), out, c.want)
			}
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("bad input left %v in tmp-root", got)
			}
		})
	}
}
