package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
)

// reachCaller is Python that tries to write over what the caller wrote
// before the run through the analysis' stdio: reach(fd) clears O_APPEND on
// the descriptor's open file description (fcntl F_SETFL) and seeks it to
// 0, so that its next write lands on the caller's first bytes when the
// description is the caller's own.
const reachCaller = `import os, fcntl, sys
def reach(fd):
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_APPEND)
    try:
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        pass
`

// earlier is what the caller's log holds before the run.
const earlier = "the caller's own line, written before the run\n"

// callerLog is a log holding earlier, open for appending as `>>log` opens
// it.
func callerLog(t *testing.T) (*os.File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
}

// runTo runs the real binary with stdout and stderr given (nil: a buffer,
// returned in the result) and returns its result.
func runTo(t *testing.T, stdout, stderr *os.File, args ...string) result {
	t.Helper()
	cmd, rep, out, errb := jailCmd(t, runOpts{}, args...)
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	return finishJail(t, cmd, runBounded(t, cmd), rep, out, errb)
}

// runBounded runs cmd, failing the test if it has not ended in a minute: a
// relay that does not end must fail, not hang, the test.
func runBounded(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not end within a minute", cmd.Args)
	}
	return nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRelayAppendedLog: with stdout `>>log`, an analysis that clears
// O_APPEND on fd 1, seeks to 0 and writes cannot overwrite what the caller
// wrote before the run, whether the jail runs it itself, through a server
// from a cold start, or from a slot: the log holds the earlier text, then
// the analysis' bytes.
func TestRelayAppendedLog(t *testing.T) {
	requireRoot(t)
	script := reachCaller + "reach(1)\nos.write(1, b'XX the analysis\\n')\n"
	want := earlier + "XX the analysis\n"
	for _, tc := range []struct {
		name  string
		slots int // -1: no server
	}{
		{"run", -1},
		{"serve cold", 0},
		{"serve slot", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tmpRoot(t)
			var sock string
			if tc.slots >= 0 {
				sock = filepath.Join(t.TempDir(), "s.sock")
				startServeSlots(t, sock, tc.slots)
			}
			// From a slot: the server makes it beside the first runs,
			// which may start cold; each run is checked alike.
			for i := 0; i < 20; i++ {
				log, path := callerLog(t)
				args := []string{"run", "--id", runID(t, "relay-append"), "--tmp-root", root, "--", "/usr/bin/python3", "-c", script}
				if sock != "" {
					args = withServer(sock, args...)
				}
				r := runTo(t, log, nil, args...)
				wantStatus(t, r, report.StatusOK, 0)
				if got := readFile(t, path); got != want {
					t.Fatalf("the log after the run = %q, want %q (the earlier text intact, the analysis' bytes after it)", got, want)
				}
				if tc.slots <= 0 || r.report.Start == "slot" {
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
			t.Fatalf("no run of 20 took a slot")
		})
	}
}

// startServeSlots starts a server on a socket at path with n slots per
// profile and waits for its socket.
func startServeSlots(t *testing.T, path string, n int) {
	t.Helper()
	cmd := exec.Command(jailBin, "serve", "--socket", path, "--slots", strconv.Itoa(n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, func() bool { _, err := os.Stat(path); return err == nil }, "the socket "+path)
}

// TestRelayMergedLog: with `>>log 2>&1`, lines written alternately to
// stdout and stderr arrive in the order written (one pipe serves both), an
// analysis that reaches for the description through fd 2 halfway cannot
// write over the earlier text, and the summary line comes after the
// analysis' last byte, from a background process it left included.
func TestRelayMergedLog(t *testing.T) {
	requireRoot(t)
	const lines = 5000
	script := reachCaller + fmt.Sprintf(`import subprocess
for i in range(%d):
    if i == %d:
        reach(2)
    os.write(1 + i %% 2, b'%%s %%d\n' %% (b'err' if i %% 2 else b'out', i))
import time
subprocess.Popen(['/bin/sh', '-c', 'echo background; : >bg; exec sleep 1000'])
while not os.path.exists('bg'):
    time.sleep(0.01)
`, lines, lines/2)
	var want strings.Builder
	want.WriteString(earlier)
	for i := range lines {
		fmt.Fprintf(&want, "%s %d\n", map[bool]string{true: "err", false: "out"}[i%2 == 1], i)
	}
	want.WriteString("background\n")
	log, path := callerLog(t)
	r := runTo(t, log, log, "run", "--id", runID(t, "relay-merged"), "--tmp-root", tmpRoot(t), "--", "/usr/bin/python3", "-c", script)
	wantStatus(t, r, report.StatusOK, 0)
	got := readFile(t, path)
	body, summary, _ := strings.Cut(got, "scidex-jail: run id=")
	if body != want.String() {
		t.Fatalf("the log before the summary line: %s", firstDiff(body, want.String()))
	}
	if strings.Count(summary, "\n") != 1 || !strings.HasSuffix(summary, "\n") {
		t.Fatalf("the log after the analysis' bytes = %q, want the summary line alone", summary)
	}
}

// firstDiff names the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d = %q, want %q", i+1, gl, wl)
		}
	}
	return "the same"
}

// TestRelayLargeOutput: 50 MB written to a `>>log` stdout arrive whole, and
// before the summary line (stderr, the same description).
func TestRelayLargeOutput(t *testing.T) {
	requireRoot(t)
	const mib, size = 1 << 20, 50
	script := reachCaller + fmt.Sprintf(`reach(1)
chunk = bytes(range(256)) * 4096
for _ in range(%d):
    mv = memoryview(chunk)
    while mv:
        mv = mv[os.write(1, mv):]
`, size)
	log, path := callerLog(t)
	r := runTo(t, log, log, "run", "--id", runID(t, "relay-large"), "--tmp-root", tmpRoot(t), "--stdio-bytes", "none", "--", "/usr/bin/python3", "-c", script)
	wantStatus(t, r, report.StatusOK, 0)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := len(earlier)
	if string(got[:head]) != earlier {
		t.Fatalf("the log's first %d bytes = %q, want the earlier text %q", head, got[:head], earlier)
	}
	chunk := bytes.Repeat(func() []byte {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}(), 4096)
	body := got[head:]
	if len(body) < size*mib || !bytes.Equal(body[:size*mib], bytes.Repeat(chunk, size)) {
		t.Fatalf("the log holds %d bytes after the earlier text, want the analysis' %d MiB first, whole", len(body), size)
	}
	if tail := string(body[size*mib:]); !strings.HasPrefix(tail, "scidex-jail: run id=") || strings.Count(tail, "\n") != 1 {
		t.Fatalf("after the analysis' bytes: %q, want the summary line alone", tail)
	}
}

// TestRelayWriteFails: a caller's stdout on a file system that fills up
// does not wedge the run: the relay keeps draining, the analysis ends as
// it would have (ok), and the run is delivery_failed (exit 122) with the
// stdout's loss in delivery_errors. The file system is a 1 MiB tmpfs in a
// mount namespace of the test's own (unshare -m), gone with it.
func TestRelayWriteFails(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	rep := filepath.Join(t.TempDir(), "report.json")
	script := "import os\nchunk = b'x' * 65536\nfor _ in range(64):\n    os.write(1, chunk)\n"
	sh := fmt.Sprintf(`mount -t tmpfs -o size=1m tmpfs %s && exec %s run --report %s --id %s --tmp-root %s -- /usr/bin/python3 -c "%s" >>%s/log`,
		dir, jailBin, rep, runID(t, "relay-full"), tmpRoot(t), script, dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-m", "--propagation", "private", "/bin/sh", "-c", sh)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	r := finishJail(t, cmd, runBounded(t, cmd), rep, &out, &errb)
	wantStatus(t, r, report.StatusDeliveryFailed, report.ExitDeliveryFailed)
	if r.report.AnalysisStatus != report.StatusOK {
		t.Errorf("analysis_status = %q, want ok: the analysis' writes all went through", r.report.AnalysisStatus)
	}
	if len(r.report.DeliveryErrors) != 1 || !strings.Contains(r.report.DeliveryErrors[0], "stdout") || !strings.Contains(r.report.DeliveryErrors[0], "4194304 bytes") {
		t.Errorf("delivery_errors = %q, want one, naming stdout and its 4194304 bytes", r.report.DeliveryErrors)
	}
}

// TestRelayHeldOutside: an analysis that passes its stdout's pipe out of
// the run (SCM_RIGHTS over a unix socket in a --rw directory, to a process
// of the host that keeps it) cannot keep the run from ending: once the
// run's processes are gone the relay is cut, whether the holder stays
// silent (a second without a byte) or trickles a byte now and then (two
// ticks that find the relay waiting to read); what came before is in the
// log after the earlier text, and the run is delivery_failed, saying the
// stream was held open.
func TestRelayHeldOutside(t *testing.T) {
	requireRoot(t)
	for _, trickle := range []bool{false, true} {
		t.Run(map[bool]string{false: "silent", true: "trickling"}[trickle], func(t *testing.T) { relayHeldOutside(t, trickle) })
	}
}

func relayHeldOutside(t *testing.T, trickle bool) {
	dir := filepath.Join(tmpRoot(t), "rw")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	sockPath := filepath.Join(dir, "s")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sockPath, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Chmod(sockPath, 0o777); err != nil {
		t.Fatal(err)
	}
	held := make(chan []int, 1)
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		c, err := l.AcceptUnix()
		if err != nil {
			held <- nil
			return
		}
		defer c.Close()
		oob := make([]byte, unix.CmsgSpace(4))
		_, oobn, _, _, err := c.ReadMsgUnix(make([]byte, 1), oob)
		var fds []int
		if msgs, perr := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && perr == nil && len(msgs) == 1 {
			fds, _ = unix.ParseUnixRights(&msgs[0])
		}
		held <- fds
		// A byte every 300 ms into the pipe, until the run has ended.
		for trickle && len(fds) == 1 {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
				unix.Write(fds[0], []byte("z"))
			}
		}
	}()
	script := reachCaller + "import socket\nreach(1)\nos.write(1, b'before\\n')\n" +
		"s = socket.socket(socket.AF_UNIX)\ns.connect('" + sockPath + "')\nsocket.send_fds(s, [b'x'], [1])\n"
	log, path := callerLog(t)
	r := runTo(t, log, nil, "run", "--id", runID(t, "relay-held"), "--tmp-root", tmpRoot(t), "--rw", dir, "--", "/usr/bin/python3", "-c", script)
	l.Close() // an analysis that never connected: Accept fails, nothing is held
	close(stop)
	<-trickled
	fds := <-held
	for _, fd := range fds {
		unix.Close(fd)
	}
	if len(fds) != 1 {
		t.Fatalf("the host process received %d descriptors, want the analysis' stdout; %v", len(fds), r)
	}
	wantStatus(t, r, report.StatusDeliveryFailed, report.ExitDeliveryFailed)
	if len(r.report.DeliveryErrors) != 1 || !strings.Contains(r.report.DeliveryErrors[0], "held open") {
		t.Errorf("delivery_errors = %q, want one saying stdout was held open", r.report.DeliveryErrors)
	}
	got := readFile(t, path)
	if want := earlier + "before\n"; !trickle && got != want || trickle && strings.TrimRight(got, "z") != want {
		t.Errorf("the log = %q, want %q (and, trickling, the holder's z's)", got, want)
	}
}
