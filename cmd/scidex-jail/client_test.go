package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// serverSocket starts a server on a socket of its own and returns the
// socket's path.
func serverSocket(t *testing.T) string {
	t.Helper()
	requireRoot(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	startServeSocket(t, sock)
	return sock
}

// withServer is run's args (which start with "run") with --server sock
// after the command's name.
func withServer(sock string, args ...string) []string {
	return append([]string{"run", "--server", sock}, args[1:]...)
}

// summaryHead is the summary line in stderr up to its times, which differ
// from run to run; and stderr without the line.
func summaryHead(stderr string) (head, rest string) {
	var lines []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if strings.HasPrefix(l, "scidex-jail: run id=") {
			head, _, _ = strings.Cut(l, " wall=")
			continue
		}
		lines = append(lines, l)
	}
	return head, strings.Join(lines, "")
}

// TestClientSameAsRun: run --server gives what run gives: the exit
// status, the analysis' stdin, stdout and stderr, the summary line, the
// report's status, exit code and outputs.
func TestClientSameAsRun(t *testing.T) {
	root := tmpRoot(t)
	sock := serverSocket(t)
	for _, tc := range []struct {
		name    string
		command []string
		status  report.Status
		code    int
	}{
		{"exit 3", []string{"/bin/sh", "-c", "cat; echo err >&2; echo kept > f.txt; exit 3"}, report.StatusExitNonzero, 3},
		{"ok", []string{"/bin/sh", "-c", "cat; mkdir d; echo a > d/a; echo b > b"}, report.StatusOK, 0},
		{"killed", []string{"/bin/sh", "-c", "echo before; kill -KILL $$"}, report.StatusSignaled, 128 + 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--id", "client-same", "--tmp-root", root, "--env", "X=1", "--"}, tc.command...)
			o := runOpts{stdin: "in\n"}
			plain := runJail(t, o, args...)
			wantStatus(t, plain, tc.status, tc.code)
			via := runJail(t, o, withServer(sock, args...)...)
			wantStatus(t, via, tc.status, tc.code)
			if via.stdout != plain.stdout {
				t.Errorf("stdout through the server = %q, run's = %q", via.stdout, plain.stdout)
			}
			viaHead, viaErr := summaryHead(via.stderr)
			plainHead, plainErr := summaryHead(plain.stderr)
			if viaErr != plainErr || viaHead != plainHead || viaHead == "" {
				t.Errorf("stderr through the server:\n%s\nrun's:\n%s\nwant the same, but for the summary's times", via.stderr, plain.stderr)
			}
			var viaOut, plainOut []string
			for _, o := range via.report.Outputs {
				viaOut = append(viaOut, o.Path+" "+o.SHA256)
			}
			for _, o := range plain.report.Outputs {
				plainOut = append(plainOut, o.Path+" "+o.SHA256)
			}
			if !slices.Equal(viaOut, plainOut) {
				t.Errorf("outputs through the server %q, run's %q", viaOut, plainOut)
			}
		})
	}
	cleanedUp(t, root)
}

// cleanedUp checks that the runs left nothing in the tmp root root once
// the server's cleanups are over: a served run's reply goes before its
// run directory's removal (serve.md), so a client can exit while it is
// still there. The wait's bound only guards against a cleanup that never
// comes; what stays is named.
func cleanedUp(t *testing.T, root string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(entries(t, root)) != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if e := entries(t, root); len(e) != 0 {
		t.Errorf("tmp root 20 s after the runs' replies holds %v, want nothing", e)
	}
}

// TestClientFlagsOfItsOwn: --report and --config are relative to the
// client's directory; --summary none and fd:N, --ready-fd are the
// client's, as for run.
func TestClientFlagsOfItsOwn(t *testing.T) {
	root := tmpRoot(t)
	sock := serverSocket(t)
	dir := t.TempDir()
	sum := filepath.Join(dir, "summary.txt")
	sf, err := os.Create(sum)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A profile of a file the server could not find from its own
	// directory: the run is ok only if it was read.
	if err := os.WriteFile(filepath.Join(dir, "p.json"), []byte(`{"profiles": {"mine": {"base": "default", "memory": "3G"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(jailBin, "run", "--server", sock, "--id", "client-own", "--tmp-root", root, "--report", "rel.json",
		"--config=p.json", "--profile", "mine", "--summary=fd:3", "--ready-fd", "4", "--", "/bin/sh", "-c", "echo out; echo err >&2")
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{sf, w}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, err := readAll(r); err != nil || b != "r" {
		t.Errorf("--ready-fd: read %q, %v; want the one byte r, then end of file", b, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run --server: %v; stderr %s", err, errb.String())
	}
	res := finishJail(t, cmd, nil, filepath.Join(dir, "rel.json"), &out, &errb)
	wantStatus(t, res, report.StatusOK, 0)
	if res.stdout != "out\n" || res.stderr != "err\n" {
		t.Errorf("stdout %q, stderr %q; want the analysis' alone (the summary on fd 3)", res.stdout, res.stderr)
	}
	if b, _ := os.ReadFile(sum); !strings.HasPrefix(string(b), "scidex-jail: run id=client-own status=ok") {
		t.Errorf("--summary fd:3 got %q, want the summary line", b)
	}
	none := runJail(t, runOpts{}, "run", "--server", sock, "--id", "client-none", "--tmp-root", root, "--summary", "none", "--", "/bin/true")
	if none.code != 0 || none.stderr != "" {
		t.Errorf("--summary none: exit %d, stderr %q; want 0 and nothing", none.code, none.stderr)
	}
}

func readAll(r *os.File) (string, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r)
	return b.String(), err
}

// TestClientCancel: a SIGTERM to run --server cancels the run in the
// server, as it cancels run: cancelled, 143, the analysis dead.
func TestClientCancel(t *testing.T) {
	root := tmpRoot(t)
	sock := serverSocket(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, m, wait := clientSleeping(t, sock, root, "client-cancel")
			cmd.Process.Signal(sig)
			res := wait()
			wantStatus(t, res, report.StatusCancelled, 143)
			if !strings.Contains(res.stderr, "status=cancelled exit=143") {
				t.Errorf("stderr %q, want the summary of a cancelled run", res.stderr)
			}
			waitGone(t, m, 5*time.Second)
		})
	}
}

// clientSleeping starts run --server SOCK whose analysis is `sleep
// MARKER`, and returns once the sleep runs: the client, its marker, and
// wait, which waits for the client and reads its result.
func clientSleeping(t *testing.T, sock, root, id string) (cmd *exec.Cmd, m string, wait func() result) {
	t.Helper()
	m = marker(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd, rep, out, errb := jailCmd(t, runOpts{extra: []*os.File{w}}, "run", "--server", sock, "--id", id, "--tmp-root", root,
		"--ready-fd", "3", "--", "/bin/sleep", m)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if n, err := r.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("ready byte: %d, %v", n, err)
	}
	// The client's own command line holds the marker too.
	waitFor(t, func() bool {
		return slices.ContainsFunc(testutil.ProcessesWith(m), func(p int) bool { return p != cmd.Process.Pid })
	}, "the sleep to start")
	return cmd, m, func() result { return finishJail(t, cmd, cmd.Wait(), rep, out, errb) }
}

// TestClientBadFlags: what run refuses, run --server refuses with the
// same message and exit 125, whether the client or the server finds it.
func TestClientBadFlags(t *testing.T) {
	root := tmpRoot(t)
	sock := serverSocket(t)
	for _, args := range [][]string{
		{"run", "--id", "x", "--tmp-root", root, "--cpus", "0", "--", "/bin/true"},            // the parse
		{"run", "--id", "a b", "--tmp-root", root, "--", "/bin/true"},                         // the spec's checks
		{"run", "--id", "x", "--tmp-root", root, "--profile", "nope", "--", "/bin/true"},      // the profile
		{"run", "--id", "x", "--tmp-root", root, "--ro", "/nonexistent/x", "--", "/bin/true"}, // the request's paths
		{"run", "--id", "x", "--tmp-root", root, "--uid", "4242", "--", "/bin/true"},          // the request's ids
		{"run", "--id", "x", "--tmp-root", "/nonexistent/root", "--", "/bin/true"},            // found by the server's run
		{"run", "--id", "x", "--tmp-root", root},                                              // no command
		{"run", "--id", "x", "--tmp-root", root, "/bin/true"},                                 // the command before --
		{"run", "--id", "x", "--tmp-root", root, "--ready-fd", "2", "--", "/bin/true"},
		{"run", "--id", "x", "--tmp-root", root, "--summary", "fd:9", "--", "/bin/true"},
	} {
		plain := runJail(t, runOpts{}, args...)
		via := runJail(t, runOpts{}, withServer(sock, args...)...)
		if plain.code != 125 || via.code != 125 || via.stderr != plain.stderr || via.report != nil {
			t.Errorf("%q: through the server exit %d, report %v, stderr %q; run's exit %d, stderr %q; want 125, no report, the same message",
				args, via.code, via.report != nil, via.stderr, plain.code, plain.stderr)
		}
	}
	if e := entries(t, root); len(e) != 0 {
		t.Errorf("tmp root holds %v, want nothing", e)
	}
}

// TestClientNoServer: a socket nobody answers on is exit 125, with a
// message naming it and how to start a server there.
func TestClientNoServer(t *testing.T) {
	root := tmpRoot(t)
	sock := filepath.Join(t.TempDir(), "none.sock")
	res := runJail(t, runOpts{}, "run", "--server", sock, "--id", "client-none", "--tmp-root", root, "--", "/bin/true")
	want := "scidex-jail serve --socket " + sock
	if res.code != 125 || !strings.HasPrefix(res.stderr, "scidex-jail: --server "+sock) || !strings.Contains(res.stderr, want) || res.report != nil {
		t.Fatalf("run --server %s: exit %d, stderr %q; want 125, a message naming the socket and %q", sock, res.code, res.stderr, want)
	}
}
