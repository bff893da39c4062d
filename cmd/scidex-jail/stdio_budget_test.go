package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
)

// printer400 writes 400 lines of 1 MiB to stdout, then says so on stderr
// and waits for its stdin to close: the test reads the jail's memory high
// water mark while the run is still there.
const printer400 = `import sys
b = b"x" * 1048576 + b"\n"
for _ in range(400):
    sys.stdout.buffer.write(b)
sys.stdout.flush()
sys.stderr.write("written\n")
sys.stderr.flush()
sys.stdin.read()
`

// TestStdioBudget: an analysis printing 400 MB to a pipe gives the caller
// the default budget (the first 4 MiB, one marker line, the last 4 MiB),
// the report says what was written, delivered and dropped, the notes name
// the truncation, and the jail itself never held more than its budget's
// tail: its VmHWM stays far below what the analysis wrote. The same
// through a server (`run --server`): the client's pipe is the served
// run's stdout.
func TestStdioBudget(t *testing.T) {
	requireRoot(t)
	const total = 400 * (1<<20 + 1)
	const budget = 8 << 20
	for _, tc := range []struct {
		name   string
		served bool
	}{{"run", false}, {"served", true}} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"run", "--id", runID(t, "stdio-budget"), "--tmp-root", tmpRoot(t), "--", "/usr/bin/python3", "-c", printer400}
			if tc.served {
				sock := filepath.Join(t.TempDir(), "s.sock")
				startServeSlots(t, sock, 0)
				args = withServer(sock, args...)
			}
			cmd, rep, _, _ := jailCmd(t, runOpts{}, args...)
			outR, outW := pipe(t)
			errR, errW := pipe(t)
			inR, inW := pipe(t)
			cmd.Stdout, cmd.Stderr, cmd.Stdin = outW, errW, inR
			var got counted
			copied := make(chan error, 1)
			go func() { _, err := io.Copy(&got, outR); copied <- err }()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			outW.Close()
			errW.Close()
			inR.Close()
			// The analysis has written all; the jail (the client, served)
			// is still there: its high water mark is the run's.
			stderr := bufio.NewReader(errR)
			line, err := stderr.ReadString('\n')
			if line != "written\n" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the analysis' stderr = %q, %v; want written", line, err)
			}
			hwm := vmHWM(t, cmd.Process.Pid)
			inW.Close()
			rest, _ := io.ReadAll(stderr)
			r := finishJail(t, cmd, cmd.Wait(), rep, &bytes.Buffer{}, bytes.NewBuffer(rest))
			if err := <-copied; err != nil {
				t.Fatal(err)
			}
			wantStatus(t, r, report.StatusOK, 0)
			dropped := int64(total - budget)
			marker := fmt.Sprintf("\n[scidex-jail: %d bytes of the analysis' stdout dropped here", dropped)
			if got.n > budget+256 || !strings.HasPrefix(string(got.middle), marker) {
				t.Errorf("the caller's stdout got %d bytes, the first past the head %q; want the %d bytes of the budget and the marker %q", got.n, got.middle, budget, marker)
			}
			if !bytes.Equal(got.last, []byte("x\n")) {
				t.Errorf("the caller's stdout ends %q, want the analysis' last bytes", got.last)
			}
			want := report.Stream{Relayed: true, Bytes: total, Delivered: budget, Dropped: dropped}
			if s := r.report.Streams; s == nil || s.Stdout.Bytes != want.Bytes || s.Stdout.Delivered != want.Delivered || s.Stdout.Dropped != want.Dropped || !s.Stdout.Relayed || !strings.HasSuffix(s.Stdout.Tail, "xxx\n") || len(s.Stdout.Tail) != 4096 {
				t.Errorf("streams = %+v, want stdout %+v with the last 4096 bytes as its tail", s, want)
			}
			notes := fmt.Sprintf("stdout truncated: %d of its %d bytes dropped", dropped, total)
			if !strings.Contains(r.report.CompletionNotes, notes) {
				t.Errorf("completion_notes = %q, want it to say %q", r.report.CompletionNotes, notes)
			}
			if !tc.served && hwm > 64<<20 {
				t.Errorf("the jail's VmHWM = %d MiB after relaying 400 MiB, want under 64 MiB (the budget's tail is 4 MiB)", hwm>>20)
			}
			t.Logf("the jail's VmHWM: %d KiB", hwm>>10)
		})
	}
}

// TestStdioBudgetFlag: --stdio-bytes sets the budget (half head, half
// tail), none lifts it, and a 0 is refused, naming the flag.
func TestStdioBudgetFlag(t *testing.T) {
	requireRoot(t)
	script := "import sys\nsys.stdout.write('a' * 100000 + 'b' * 100000)\n"
	for _, tc := range []struct {
		name, value string
		want        string // stdout, "" for the refusal
		dropped     int64
	}{
		{"64K", "64K", strings.Repeat("a", 32<<10) + "\n[scidex-jail: 134464 bytes of the analysis' stdout dropped here: over its budget of 65536 bytes (stdio_bytes); the last 32768 follow]\n" + strings.Repeat("b", 32<<10), 200000 - 64<<10},
		{"none", "none", strings.Repeat("a", 100000) + strings.Repeat("b", 100000), 0},
		{"zero", "0", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runJail(t, runOpts{}, "run", "--id", runID(t, "stdio-flag"), "--tmp-root", tmpRoot(t), "--stdio-bytes", tc.value, "--", "/usr/bin/python3", "-c", script)
			if tc.want == "" {
				if r.code != 125 || !strings.Contains(r.stderr, "--stdio-bytes") || !strings.Contains(r.stderr, "refused") {
					t.Errorf("--stdio-bytes 0: exit %d, stderr %q; want 125 and the flag's refusal", r.code, r.stderr)
				}
				return
			}
			wantStatus(t, r, report.StatusOK, 0)
			if r.stdout != tc.want {
				t.Errorf("stdout = %d bytes (%.80q...), want %d bytes", len(r.stdout), r.stdout, len(tc.want))
			}
			if d := r.report.Streams.Stdout.Dropped; d != tc.dropped {
				t.Errorf("streams.stdout.dropped = %d, want %d", d, tc.dropped)
			}
		})
	}
}

// TestLastWords: a failed analysis' completion notes carry what it said
// last: a Python exception's line, a SyntaxError's, another program's last
// stderr line, control characters escaped; the same through a server.
// The report keeps each stream's tail.
func TestLastWords(t *testing.T) {
	requireRoot(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	startServeSlots(t, sock, 0)
	for _, tc := range []struct {
		name    string
		command []string
		want    string
	}{
		{"KeyError", []string{"/usr/bin/python3", "-c", "print('loading')\nd = {}\nd['dose']\n"}, "; last words: KeyError: 'dose';"},
		{"SyntaxError", []string{"/usr/bin/python3", "-c", "def (:\n"}, "; last words: SyntaxError: invalid syntax;"},
		{"PermissionError", []string{"/usr/bin/python3", "-c", "open('/etc/shadow')"}, "; last words: PermissionError: [Errno 13] Permission denied: '/etc/shadow';"},
		{"shell", []string{"/bin/sh", "-c", "echo step 1 >&2; echo 'fatal: no column dose' >&2; echo >&2; exit 3"}, "; last words: fatal: no column dose;"},
		{"control characters", []string{"/bin/sh", "-c", `printf 'x\033[2J\033]0;pwned\007 \342\200\256gnp.exe\r\n' >&2; exit 1`}, `; last words: x\x1b[2J\x1b]0;pwned\x07 \u202egnp.exe;`},
	} {
		for _, served := range []bool{false, true} {
			name := tc.name
			if served {
				name += " served"
			}
			t.Run(name, func(t *testing.T) {
				args := append([]string{"run", "--id", runID(t, "last-words"), "--tmp-root", tmpRoot(t), "--"}, tc.command...)
				if served {
					args = withServer(sock, args...)
				}
				r := runJail(t, runOpts{}, args...)
				if r.report == nil || r.report.Status != report.StatusExitNonzero {
					t.Fatalf("run %q: %v; want exit_nonzero", tc.command, r)
				}
				if !strings.Contains(r.report.CompletionNotes, tc.want) {
					t.Errorf("completion_notes = %q, want it to hold %q", r.report.CompletionNotes, tc.want)
				}
				if strings.ContainsAny(r.report.CompletionNotes, "\x1b\r\n\a") {
					t.Errorf("completion_notes = %q, want no control characters", r.report.CompletionNotes)
				}
				if s := r.report.Streams; s == nil || !s.Stderr.Relayed || s.Stderr.Tail != r.stderr[:len(s.Stderr.Tail)] {
					t.Errorf("streams = %+v, want stderr's tail, the bytes the caller got before the summary line %q", s, r.stderr)
				}
			})
		}
	}
}

// counted is a writer that keeps of what it is given only its size, the
// first bytes past the budget's head and the last two.
type counted struct {
	n      int64
	middle []byte
	last   []byte
}

func (c *counted) Write(p []byte) (int, error) {
	const head = 4 << 20
	for i := range p {
		at := c.n + int64(i)
		if at >= head && at < head+200 {
			c.middle = append(c.middle, p[i])
		}
	}
	c.n += int64(len(p))
	c.last = append(c.last, p...)
	if len(c.last) > 2 {
		c.last = append([]byte{}, c.last[len(c.last)-2:]...)
	}
	return len(p), nil
}

func pipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// vmHWM is the process's peak resident set, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// TestRelayCallerStalls: a caller that never reads the pipe it handed
// over as stdout holds the analysis (its writes block, as they did on the
// caller's pipe itself) until the timeout, but not the run's end: once the
// run's processes are gone the jail's write into the caller's pipe is cut
// after 10 s without progress, and the run is delivery_failed, saying so.
// The caller's pipe keeps its flags (still blocking).
func TestRelayCallerStalls(t *testing.T) {
	requireRoot(t)
	cmd, rep, _, errb := jailCmd(t, runOpts{}, "run", "--id", runID(t, "relay-stall"), "--tmp-root", tmpRoot(t), "--timeout", "1s", "--grace", "0",
		"--", "/usr/bin/python3", "-c", "import os\nwhile True:\n    os.write(1, b'x' * 65536)\n")
	outR, outW := pipe(t)
	cmd.Stdout = outW
	err := runBounded(t, cmd)
	r := finishJail(t, cmd, err, rep, &bytes.Buffer{}, errb)
	wantStatus(t, r, report.StatusDeliveryFailed, report.ExitDeliveryFailed)
	if r.report.AnalysisStatus != report.StatusTimeout {
		t.Errorf("analysis_status = %q, want timeout: the analysis' writes blocked until then", r.report.AnalysisStatus)
	}
	if len(r.report.DeliveryErrors) != 1 || !strings.Contains(r.report.DeliveryErrors[0], "the caller took no byte of it for 10s") {
		t.Errorf("delivery_errors = %q, want one saying the caller took nothing for 10s", r.report.DeliveryErrors)
	}
	if fl, err := unix.FcntlInt(outW.Fd(), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Errorf("the caller's pipe flags = %#x, %v; want it still blocking", fl, err)
	}
	outR.Close()
}
