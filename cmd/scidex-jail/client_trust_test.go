package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeGot is what testdata/fake_server.py received from its clients.
type fakeGot struct {
	Bytes int `json:"bytes"`
	FDs   int `json:"fds"`
}

// sharedDir is a directory every account may make entries in (mode 1777,
// as /tmp), where a hostile server of another account could listen.
func sharedDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sj-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o1777); err != nil {
		t.Fatal(err)
	}
	return d
}

// fakeServer starts testdata/fake_server.py (a server that greets with a
// valid hello and records what it is sent) in mode for one connection,
// as uid and gid 65534 (nobody) when asNobody, else as this process. It
// returns its socket and a function that waits for the connection's end
// and returns what the server received.
func fakeServer(t *testing.T, asNobody bool, mode string) (string, func() fakeGot) {
	t.Helper()
	dir := sharedDir(t)
	// A copy the other account can read, whatever the checkout's modes.
	src, err := os.ReadFile(filepath.Join("testdata", "fake_server.py"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "fake_server.py")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "jail.sock")
	argv := []string{"/usr/bin/python3", script, sock, mode, "1"}
	if asNobody {
		argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	waitFor(t, func() bool { _, err := os.Stat(sock); return err == nil }, "the fake server's socket")
	return sock, func() fakeGot {
		t.Helper()
		select {
		case err := <-done:
			done <- err // for the cleanup
			if err != nil {
				t.Fatalf("fake server: %v; stderr %s", err, errb.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the fake server did not end 30 s after its client; stderr %s", errb.String())
		}
		var got fakeGot
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("fake server's record %q: %v", out.String(), err)
		}
		return got
	}
}

// TestClientChecksTheServer: run --server sends nothing to a server of
// another account (it would get the client's stdio and forge the
// report): exit 125 naming the socket and the server's uid and user,
// and the server received no byte and no descriptor. A server of the
// client's own uid (root here) is trusted; one that ends the connection
// before it accepted the run gets 125 saying the run never started.
func TestClientChecksTheServer(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name     string
		asNobody bool
		mode     string
		code     int
		say      []string // in stderr, beside the socket's path
		fds      int      // what the server must have received
		sent     bool     // and whether it received the request's bytes
	}{
		{"another uid", true, "forge", 125, []string{"uid 65534 (nobody)", "nothing was sent"}, 0, false},
		{"own uid", false, "forge", 0, nil, 3, true},
		{"own uid, ends before accepting", false, "drop", 125, []string{"before the server accepted the run", "never started"}, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock, received := fakeServer(t, tc.asNobody, tc.mode)
			res := runJail(t, runOpts{stdin: "secret\n"}, "run", "--server", sock, "--id", "client-trust", "--", "/bin/true")
			got := received()
			if res.code != tc.code {
				t.Errorf("run --server a %s server: exit %d, want %d; %v", tc.name, res.code, tc.code, res)
			}
			for _, s := range tc.say {
				if !strings.Contains(res.stderr, "--server "+sock) || !strings.Contains(res.stderr, s) {
					t.Errorf("run --server a %s server: stderr %q, want it to name %s and say %q", tc.name, res.stderr, sock, s)
				}
			}
			if got.FDs != tc.fds || (got.Bytes > 0) != tc.sent {
				t.Errorf("a %s server received %d bytes, %d descriptors; want %d descriptors, bytes: %v", tc.name, got.Bytes, got.FDs, tc.fds, tc.sent)
			}
		})
	}
}

// TestClientRefusedConnection: a server at its limit of clients greets
// with its refusal instead of its hello; run --server says the server's
// reason (exit 125), not that the server is of another version. Then 200
// clients at once: each gets its run's reply or the server's refusal.
func TestClientRefusedConnection(t *testing.T) {
	root := tmpRoot(t)
	sock := serverSocket(t)
	var held []net.Conn
	for range 64 {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		buf := make([]byte, 256)
		if n, err := c.Read(buf); err != nil || !strings.Contains(string(buf[:n]), `"hello"`) {
			t.Fatalf("connection %d: read %q, %v; want the hello", len(held), buf[:n], err)
		}
	}
	res := runJail(t, runOpts{}, "run", "--server", sock, "--id", "client-refused", "--tmp-root", root, "--", "/bin/true")
	want := "scidex-jail: --server " + sock + ": refused: 64 clients connected"
	if res.code != 125 || !strings.HasPrefix(res.stderr, want) || strings.Contains(res.stderr, "protocol") {
		t.Errorf("run --server with 64 clients connected: %v\nwant exit 125 and %q", res, want)
	}
	for _, c := range held {
		c.Close()
	}

	var wg sync.WaitGroup
	results := make([]result, 200)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runJail(t, runOpts{}, "run", "--server", sock, "--id", fmt.Sprintf("client-many-%d", i), "--tmp-root", root, "--", "/bin/true")
		}()
	}
	wg.Wait()
	refused := 0
	for i, r := range results {
		switch {
		case r.code == 0 && r.report != nil:
		case r.code == 125 && strings.HasPrefix(r.stderr, "scidex-jail: ") && strings.Contains(r.stderr, "refused: ") && !strings.Contains(r.stderr, "protocol"):
			refused++
		default:
			t.Errorf("client %d of 200: %v\nwant exit 0 with a report, or 125 with the server's refusal", i, r)
		}
	}
	t.Logf("200 clients at once: %d refused", refused)
	cleanedUp(t, root)
}

// TestClientServerKilled: a server killed after it accepted the run
// leaves its client without a reply: run --server exits 121 (not 125,
// which says the run never started) saying the run was accepted and may
// have started, and that gc removes what the server left.
func TestClientServerKilled(t *testing.T) {
	root := tmpRoot(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	srv := startServeSocket(t, sock)
	_, m, wait := clientSleeping(t, sock, root, "client-killed")
	srv.Process.Signal(syscall.SIGKILL)
	res := wait()
	if res.code != exitLost || res.report != nil {
		t.Errorf("run --server, its server killed: exit %d, report %v; want %d, none", res.code, res.report != nil, exitLost)
	}
	for _, s := range []string{"--server " + sock, "after the server accepted the run", "may have started", "scidex-jail gc"} {
		if !strings.Contains(res.stderr, s) {
			t.Errorf("run --server, its server killed: stderr %q, want %q in it", res.stderr, s)
		}
	}
	waitGone(t, m, 5*time.Second)
	// gc takes leaves older than runfiles.StaleLeafAge only.
	time.Sleep(2500 * time.Millisecond)
	gc(t, "--tmp-root", root)
	if e := entries(t, root); len(e) != 0 {
		t.Errorf("after gc, the tmp root holds %v", e)
	}
}
