package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withFD7 returns files for exec.Cmd.ExtraFiles that put f at fd 7 (3+4)
// and leave 3-6 closed.
func withFD7(f *os.File) []*os.File { return []*os.File{nil, nil, nil, nil, f} }

// secretFile is a file only the test opens, to be inherited as fd 7.
func secretFile(t *testing.T) (*os.File, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, p
}

// holders are the processes with a descriptor on path, but those in skip.
func holders(t *testing.T, path string, skip ...int) []string {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || slices.Contains(skip, pid) {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); l == path {
				comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
				found = append(found, p.Name()+" ("+strings.TrimSpace(string(comm))+") fd "+fd.Name())
			}
		}
	}
	return found
}

// analysisOf finds the process whose command line holds marker and
// returns its pid and its parent's (the run's init), failing when either's
// descriptors cannot be read: a scan that misses them proves nothing.
func analysisOf(t *testing.T, marker string) (pid, init int) {
	t.Helper()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		b, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if !bytes.Contains(b, []byte(marker)) || bytes.Contains(b, []byte("scidex-jail")) {
			continue
		}
		pid, _ = strconv.Atoi(p.Name())
		st, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		init, _ = strconv.Atoi(f[1])
		for _, q := range []int{pid, init} {
			if _, err := os.ReadDir("/proc/" + strconv.Itoa(q) + "/fd"); err != nil {
				t.Fatalf("read the descriptors of %d: %v", q, err)
			}
		}
		return pid, init
	}
	t.Fatalf("no process with %q in its command line", marker)
	return 0, 0
}

// waitStarted reads the analysis' "started" line from r.
func waitStarted(t *testing.T, r *bufio.Reader) {
	t.Helper()
	done := make(chan string, 1)
	go func() { l, _ := r.ReadString('\n'); done <- l }()
	select {
	case l := <-done:
		if l != "started\n" {
			t.Fatalf("analysis said %q, want started", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the analysis did not start within 30 s")
	}
}

// TestInheritedFDInNoRunProcess: a descriptor the jail inherits (fd 7 on
// a secret file) is in no process of the run, neither the init nor the
// analysis, and for a served run in no slot init either: only the jail,
// the server and the client, which were handed it, hold it.
func TestInheritedFDInNoRunProcess(t *testing.T) {
	requireRoot(t)
	t.Run("run", func(t *testing.T) {
		secret, path := secretFile(t)
		marker := runID(t, "fd7")
		cmd := exec.Command(jailBin, "run", "--id", marker, "--tmp-root", tmpRoot(t), "--summary", "none",
			"--", "/bin/sh", "-c", "echo started; sleep 30; : "+marker)
		cmd.ExtraFiles = withFD7(secret)
		checkFD7(t, cmd, nil, path, marker)
	})
	t.Run("served", func(t *testing.T) {
		secret, path := secretFile(t)
		sock := filepath.Join(tmpRoot(t), "s.sock")
		srv := exec.Command(jailBin, "serve", "--socket", sock, "--slots", "2")
		srv.ExtraFiles = withFD7(secret)
		var srvErr bytes.Buffer
		srv.Stderr = &srvErr
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			srv.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- srv.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				srv.Process.Kill()
				t.Errorf("serve did not end 30 s after SIGTERM; stderr: %s", srvErr.String())
			}
		})
		waitFor(t, func() bool { _, err := os.Stat(sock); return err == nil }, "the socket "+sock)
		marker := runID(t, "fd7s")
		cmd := exec.Command(jailBin, "run", "--server", sock, "--id", marker, "--tmp-root", tmpRoot(t), "--summary", "none",
			"--", "/bin/sh", "-c", "echo started; sleep 30; : "+marker)
		cmd.ExtraFiles = withFD7(secret)
		checkFD7(t, cmd, srv, path, marker)
	})
}

// checkFD7 starts cmd (a run of an analysis that says "started" and
// sleeps), then holds every process but the test, cmd and srv to having no
// descriptor on path, and cancels the run.
func checkFD7(t *testing.T, cmd, srv *exec.Cmd, path, marker string) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	waitStarted(t, bufio.NewReader(out))
	analysis, init := analysisOf(t, marker)
	skip := []int{os.Getpid(), cmd.Process.Pid}
	if srv != nil {
		skip = append(skip, srv.Process.Pid)
	}
	if h := holders(t, path, skip...); len(h) > 0 {
		t.Errorf("processes holding the jail's inherited fd 7 (analysis %d, init %d): %v, want none", analysis, init, h)
	}
}
