package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// sparseReady leaves a 1 TiB sparse file and says so on stdout as it exits:
// with the byte budgets off, hashing it would take the trusted side many
// minutes, so a signal sent a moment later lands in the post-run work.
const sparseReady = `open("big.bin", "wb").truncate(1 << 40)
print("ready", flush=True)`

// TestCancelDuringPostRun: SIGTERM, SIGINT or SIGHUP to the jail while it
// hashes what the analysis left ends the run at once with status
// cancelled, exit 128+n, the report written and nothing left. How soon is
// logged, not asserted (the deadline only keeps a jail that does not stop
// from hanging the test; bench/ measures).
func TestCancelDuringPostRun(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		sig      syscall.Signal
		rootless bool
	}{{syscall.SIGTERM, false}, {syscall.SIGINT, false}, {syscall.SIGHUP, false}, {syscall.SIGTERM, true}}
	for _, c := range cases {
		mode := map[bool]string{false: "root", true: "rootless"}[c.rootless]
		t.Run(unix.SignalName(c.sig)+"/"+mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hostileDeadline)
			defer cancel()
			cmd, h := hostileCmd(ctx, t, c.rootless, false, []string{"--output-bytes", "none", "--output-file-bytes", "none", "--output-time", "none"}, sparseReady)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			if line != "ready\n" {
				t.Fatalf("analysis said %q, want ready", line)
			}
			// The analysis exits as it prints; the supervisor is in the
			// post-run work once it has read some of the file.
			waitRead(t, cmd.Process.Pid, 64<<20)
			sent := time.Now()
			cmd.Process.Signal(c.sig)
			err = cmd.Wait()
			t.Logf("%s to exit: %s", unix.SignalName(c.sig), time.Since(sent))
			if ctx.Err() != nil {
				t.Fatalf("the jail did not end within %s of %s", hostileDeadline, unix.SignalName(c.sig))
			}
			h.finish(t, cmd, err, &bytes.Buffer{}, &errb)
			wantStatus(t, h.result, report.StatusCancelled, 128+int(c.sig))
			o, _ := h.output("big.bin")
			if o.SHA256 != "" || !strings.Contains(o.Skipped, "stopped") {
				t.Errorf("big.bin = %+v, want it not hashed, saying the work was stopped", o)
			}
			if n := h.report.CompletionNotes; !strings.Contains(n, "after the analysis ended (exit code 0") {
				t.Errorf("notes = %q, want the cancel after the analysis' own end", n)
			}
		})
	}
}

// waitRead waits until process pid has read n bytes (rchar), failing
// after hostileDeadline.
func waitRead(t *testing.T, pid int, n int64) {
	t.Helper()
	deadline := time.Now().Add(hostileDeadline)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
		if err != nil {
			t.Fatalf("the jail is gone before it read %d bytes: %v", n, err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "rchar: "); ok {
				if got, _ := strconv.ParseInt(v, 10, 64); got >= n {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the jail did not read %d bytes within %s", n, hostileDeadline)
}

// TestSummaryNeverCostsTheRun: a stderr whose reader is gone, or that
// nobody reads, neither kills the jail (SIGPIPE) nor changes its exit
// status, and the report reaches its file.
func TestSummaryNeverCostsTheRun(t *testing.T) {
	requireRoot(t)
	for _, c := range []struct {
		name   string
		stderr func(t *testing.T) *os.File
	}{
		{"closed pipe", func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			return w
		}},
		{"full pipe", func(t *testing.T) *os.File {
			// Raw fds: an *os.File of a pipe waits in Go's poller
			// instead of failing with EAGAIN when full.
			var p [2]int
			if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unix.Close(p[0]) })
			for {
				if _, err := unix.Write(p[1], make([]byte, 4096)); err != nil {
					break
				}
			}
			unix.SetNonblock(p[1], false)
			return os.NewFile(uintptr(p[1]), "full")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hostileDeadline)
			defer cancel()
			cmd, h := hostileCmd(ctx, t, false, false, nil, `import sys; sys.exit(3)`)
			w := c.stderr(t)
			cmd.Stderr = w
			err := cmd.Run()
			w.Close()
			if ctx.Err() != nil {
				t.Fatalf("the jail did not end within %s", hostileDeadline)
			}
			h.finish(t, cmd, err, &bytes.Buffer{}, &bytes.Buffer{})
			wantStatus(t, h.result, report.StatusExitNonzero, 3)
		})
	}
}

// TestDirectorySwappedWhileListed: with the run directory on the host
// (--disk none), a process outside the jail swaps a directory of it for a
// link to /etc, again and again, while the supervisor lists and collects.
// Nothing of /etc is ever listed or collected, and nothing is left. (The
// directory may be listed under either name: whichever it had when the
// supervisor got to it.)
func TestDirectorySwappedWhileListed(t *testing.T) {
	requireRoot(t)
	script := `import os
with open("a.bin", "wb") as f:
    f.write(os.urandom(1 << 20) * 64)
os.mkdir("m")
for i in range(500):
    open("m/f%d" % i, "w").write(str(i))
os.symlink("/etc", "m.l")
print("ready", flush=True)`
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hostileDeadline)
			defer cancel()
			cmd, h := hostileCmd(ctx, t, m.rootless, true, []string{"--disk", "none"}, script)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
				t.Fatalf("analysis said %q, want ready", line)
			}
			dir := filepath.Join(h.root, runfiles.DirPrefix+h.id)
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// Swap from the analysis' end until the whole listing is
			// done: the collect directory has a.bin, whose copy starts
			// after everything was listed and takes longer than one
			// swap. Then stop, so that the run directory's removal, after
			// the copies, meets no adversary (one that keeps renaming
			// during it can make it fail; the report then says so and gc
			// removes the rest).
			swaps, listed := 0, false
			for !listed {
				if unix.Renameat2(unix.AT_FDCWD, dir+"/m", unix.AT_FDCWD, dir+"/m.l", unix.RENAME_EXCHANGE) == nil {
					swaps++
				}
				_, err := os.Lstat(filepath.Join(h.out, "a.bin"))
				listed = err == nil
				select {
				case err := <-exited:
					exited <- err
					listed = true
				default:
				}
			}
			err = <-exited
			t.Logf("%d swaps during the run", swaps)
			h.finish(t, cmd, err, &bytes.Buffer{}, &errb)
			mine := regexp.MustCompile(`^(a\.bin|m|m\.l|m/f[0-9]+|m\.l/f[0-9]+)$`)
			for _, p := range h.paths() {
				if !mine.MatchString(p) {
					t.Errorf("output %q listed: not something the analysis made (followed the link?)", p)
				}
			}
		})
	}
}
