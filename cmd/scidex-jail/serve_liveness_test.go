package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
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
		{"host root", []string{"--uid", "0", "--gid", "0"}, "host uid/gid 0:0 must be non-zero"},
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
	if r := c.next(); r.Event != "error" || !strings.Contains(r.Error, "over 1048576 bytes") {
		t.Fatalf("reply to a 2 MiB line = %+v, want the error that it is over 1 MiB", r)
	}
	// After a pause (the reply read), the server still reads requests.
	for _, name := range []string{"after", "later"} {
		if _, err := io.WriteString(in, `{"op":"bogus","req":"`+name+`"}`+"\n"); err != nil {
			t.Fatalf("send request %s: %v, want the server still reading; stderr: %s", name, err, &stderr)
		}
		if r := c.next(); r.Event != "error" || r.Req != name || !strings.Contains(r.Error, "unknown op") {
			t.Fatalf("reply to request %s = %+v, want its error (unknown op); server stderr: %s", name, r, &stderr)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after its input ended = %v, want exit 0; stderr: %s", err, &stderr)
	}
}
