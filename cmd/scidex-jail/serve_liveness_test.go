package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeBadSlotFlags: slot settings that `run` refuses end serve at its
// start with run's message and exit 125, where the server used to start
// and warn (uid 0: every run cold) or fail every slot.
func TestServeBadSlotFlags(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name  string
		flags []string
		want  string // in both run's and serve's message
	}{
		{"host root", []string{"--uid", "0", "--gid", "0"}, "--uid/--gid 0:0 must be non-zero"},
		{"missing cgroup parent", []string{"--cgroup-parent", "/does/not/exist"}, "/does/not/exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := tmpRoot(t)
			r := runJail(t, runOpts{}, append(append([]string{"run", "--id", "badslot", "--tmp-root", root}, c.flags...), "--", "/usr/bin/true")...)
			if r.code != 125 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("run %v = exit %d, stderr %q; want 125 and %q", c.flags, r.code, r.stderr, c.want)
			}
			cmd := exec.Command(jailBin, append([]string{"serve", "--socket", root + "/s.sock"}, c.flags...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
				done <- err
			case <-time.After(20 * time.Second):
				t.Fatalf("serve %v still runs after 20 s, want exit 125 at its start; stderr: %s", c.flags, &stderr)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("serve %v = %v, stderr %q; want exit 125 and %q", c.flags, err, &stderr, c.want)
			}
			if left := entries(t, root); len(left) != 0 {
				t.Errorf("serve %v left %v in its tmp-root, want nothing (no socket)", c.flags, left)
			}
		})
	}
}

// TestServeStdioLongLine: over stdin and stdout pipes, a request line
// over 1 MiB gets the error reply, the rest of the line is dropped, and
// the server carries on, as over a socket. It ended silently (exit 0, no
// reply): net.FileConn, tried on the pipe, left it non-blocking, and the
// read after the long line met EAGAIN once the client paused.
func TestServeStdioLongLine(t *testing.T) {
	requireRoot(t)
	cmd := exec.Command(jailBin, "serve", "--slots", "0")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := &serveClient{t: t, r: bufio.NewReader(out), stderr: &stderr}
	if h := c.next(); h.Event != "hello" {
		t.Fatalf("first line = %+v, want the hello", h)
	}
	long := `{"op":"cancel","req":"` + strings.Repeat("x", 2<<20) + `"}` + "\n"
	if _, err := io.WriteString(in, long); err != nil {
		t.Fatal(err)
	}
	if r := c.next(); r.Event != "bad_request" || !strings.Contains(r.Error, "over 1048576 bytes") {
		t.Fatalf("reply to a 2 MiB line = %+v, want the error that it is over 1 MiB", r)
	}
	// After a pause (the reply read), the server still reads requests.
	for _, name := range []string{"after", "later"} {
		if _, err := io.WriteString(in, `{"op":"bogus","req":"`+name+`"}`+"\n"); err != nil {
			t.Fatalf("send request %s: %v, want the server still reading; stderr: %s", name, err, &stderr)
		}
		if r := c.next(); r.Event != "bad_request" || r.Req != name || !strings.Contains(r.Error, "unknown op") {
			t.Fatalf("reply to request %s = %+v, want its error (unknown op); server stderr: %s", name, r, &stderr)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after its input ended = %v, want exit 0; stderr: %s", err, &stderr)
	}
}

// TestServeStalledClient: a client that sends runs and never reads its
// replies cannot hold up another client's run. A run's place is freed
// when it ends, not when its reply has gone; a reply that waits longer
// than --reply-timeout drops its client: its runs are cancelled, each
// writes its --report, and each undelivered reply is logged on the
// server's stderr. Before, the stalled replies held every place for ever
// and the other client's run never started.
func TestServeStalledClient(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	srv := exec.Command(jailBin, "serve", "--socket", sock, "--slots", "0", "--max-runs", "4", "--queue", "200", "--reply-timeout", "2s")
	var stderr syncBuffer
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	waitFor(t, func() bool { _, err := os.Stat(sock); return err == nil }, "the socket "+sock)

	// The stalled client: two long runs, then 30 whose reports (80 files
	// each, about 20 kB) fill the socket many times over. It never reads.
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	stalled := &serveClient{t: t, fd: fd}
	m := marker(t)
	reps := map[string]string{}
	for _, name := range []string{"long0", "long1"} {
		reps[name] = filepath.Join(t.TempDir(), name+".json")
		stalled.send(runReq(name, request.Request{ID: "stall-" + name, Cwd: root, TmpRoot: root, Report: reps[name]}, "/bin/sleep", m))
	}
	for i := range 30 {
		name := "many" + strconv.Itoa(i)
		stalled.send(runReq(name, request.Request{ID: "stall-" + name, Cwd: root, TmpRoot: root}, "/bin/sh", "-c",
			"i=0; while [ $i -lt 80 ]; do : > output-file-number-$i-with-a-long-name.txt; i=$((i+1)); done"))
	}
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) == 2 }, "the stalled client's two long runs to start")

	// Another client's run is served, whatever the stalled one does (a
	// failure detector: before, it never was).
	other := exec.Command(jailBin, "run", "--server", sock, "--id", "stall-other", "--tmp-root", root, "--", "/usr/bin/true")
	other.WaitDelay = time.Second
	done := make(chan error, 1)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- other.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("another client's run = %v, want exit 0; server stderr: %s", err, &stderr)
		}
	case <-time.After(30 * time.Second):
		other.Process.Kill()
		t.Fatalf("another client's run not served in 30 s beside a client that does not read; server stderr: %s", &stderr)
	}

	// The stalled client is dropped: its long runs cancelled, with their
	// reports, and its replies logged.
	waitGone(t, m, 30*time.Second)
	for name, path := range reps {
		waitFor(t, func() bool {
			return strings.Contains(stderr.String(), "reply not delivered: request "+name+" done, status cancelled")
		}, "the log of "+name+"'s undelivered cancelled reply")
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), `"status": "cancelled"`) && !strings.Contains(string(b), `"status":"cancelled"`) {
			t.Errorf("report of %s = %s, %v; want status cancelled", name, b, err)
		}
	}
	if !strings.Contains(stderr.String(), "the client is dropped") {
		t.Errorf("server stderr = %s, want the stalled client's drop", &stderr)
	}
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
