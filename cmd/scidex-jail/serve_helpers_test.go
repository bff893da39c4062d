package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// serveClient is a test's end of `scidex-jail serve` on a socketpair, as
// the Python package starts it: one end is the server's stdin and stdout.
type serveClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	fd     int
	r      *bufio.Reader
	stderr *bytes.Buffer
}

type serveReply struct {
	Event    string          `json:"event"`
	Req      string          `json:"req"`
	ExitCode *int            `json:"exit_code"`
	Reason   string          `json:"reason"`
	Field    string          `json:"field"`
	Error    string          `json:"error"`
	Report   json.RawMessage `json:"report"`
	Version  string          `json:"version"`
	Protocol int             `json:"protocol"`
}

// failed says whether the reply ends its request without a report: a
// refusal, a bad request or an error.
func (r serveReply) failed() bool {
	return r.Event == "refused" || r.Event == "bad_request" || r.Event == "error"
}

func (r serveReply) report(t *testing.T) *report.Report {
	t.Helper()
	var rep report.Report
	if err := json.Unmarshal(r.Report, &rep); err != nil {
		t.Fatalf("reply %s %s: report: %v", r.Event, r.Req, err)
	}
	return &rep
}

// startServe starts the server with args and reads its hello.
func startServe(t *testing.T, args ...string) *serveClient {
	t.Helper()
	requireRoot(t)
	return startServeCmd(t, exec.Command(jailBin, append([]string{"serve"}, args...)...))
}

// startServeCmd starts cmd, a `scidex-jail serve` (run as another user,
// say), and reads its hello.
func startServeCmd(t *testing.T, cmd *exec.Cmd) *serveClient {
	t.Helper()
	return startServeBuf(t, cmd, 0)
}

// startServeBuf is startServeCmd with the server's end of the socketpair
// given a send buffer of sndbuf bytes (the kernel doubles it, and has a
// floor of about 4.5 KB); 0: the default. A small one makes the server's
// replies wait for the client to read.
func startServeBuf(t *testing.T, cmd *exec.Cmd, sndbuf int) *serveClient {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sndbuf > 0 {
		if err := unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_SNDBUF, sndbuf); err != nil {
			t.Fatal(err)
		}
	}
	theirs := os.NewFile(uintptr(fds[1]), "serve-end")
	c := &serveClient{t: t, fd: fds[0], stderr: &bytes.Buffer{}}
	c.cmd = cmd
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = theirs, theirs, c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	c.r = bufio.NewReader(os.NewFile(uintptr(fds[0]), "serve"))
	t.Cleanup(func() {
		unix.Shutdown(c.fd, unix.SHUT_WR)
		done := make(chan error, 1)
		go func() { done <- c.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			t.Errorf("serve did not end 30 s after its input did; stderr: %s", c.stderr)
		}
	})
	if h := c.next(); h.Event != "hello" || h.Version == "" {
		t.Fatalf("first line = %+v, want a hello with the version", h)
	}
	return c
}

// send writes one request line, with fds attached when given (and
// declared: "stdio").
func (c *serveClient) send(req map[string]any, fds ...int) {
	c.t.Helper()
	if len(fds) > 0 {
		req["stdio"] = len(fds)
	}
	line, err := json.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendLine(append(line, '\n'), fds...)
}

func (c *serveClient) sendLine(line []byte, fds ...int) {
	c.t.Helper()
	var rights []byte
	if len(fds) > 0 {
		rights = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(c.fd, line, rights, nil, 0); err != nil {
		c.t.Fatalf("send request: %v", err)
	}
}

// next reads one reply.
func (c *serveClient) next() serveReply {
	c.t.Helper()
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("read reply: %v (server stderr: %s)", err, c.stderr)
	}
	var r serveReply
	if err := json.Unmarshal(line, &r); err != nil {
		c.t.Fatalf("reply %q: %v", line, err)
	}
	return r
}

// await reads replies until the end (done or error) of req; others must
// be accepted replies.
func (c *serveClient) await(req string) serveReply {
	c.t.Helper()
	for {
		r := c.next()
		if r.Req == req && (r.Event == "done" || r.failed()) {
			return r
		}
		if r.Event != "accepted" {
			c.t.Fatalf("reply %+v while waiting for %s", r, req)
		}
	}
}

// runReq is a run request line: the run r, with command, named name.
func runReq(name string, r request.Request, command ...string) map[string]any {
	r.Command = command
	return map[string]any{"op": "run", "req": name, "run": r}
}

func intp(n int) *int { return &n }

// stdioPipes are /dev/null in and a pipe for out and err: fds to send,
// and a function that closes our copies of what was sent and returns
// what the analysis wrote, once the run has ended.
func stdioPipes(t *testing.T) (fds []int, output func() string) {
	t.Helper()
	null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return []int{null, int(w.Fd()), int(w.Fd())}, func() string {
		unix.Close(null)
		w.Close()
		var b bytes.Buffer
		b.ReadFrom(r)
		r.Close()
		return b.String()
	}
}

// waitFor polls cond for up to 20 s, failing with what it waited for.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startServeSocket starts the server on a socket at path and waits for it.
func startServeSocket(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(jailBin, "serve", "--socket", path, "--slots", "0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, func() bool { _, err := os.Stat(path); return err == nil }, "the socket "+path)
	return cmd
}

// dialServe connects to a server's socket and reads its hello.
func dialServe(t *testing.T, path string) *serveClient {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatalf("connect %s: %v", path, err)
	}
	f := os.NewFile(uintptr(fd), "serve")
	t.Cleanup(func() { f.Close() })
	c := &serveClient{t: t, fd: fd, r: bufio.NewReader(f), stderr: &bytes.Buffer{}}
	if h := c.next(); h.Event != "hello" {
		t.Fatalf("first line = %+v, want hello", h)
	}
	return c
}
