package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
)

// underScript is a command that runs the jail with args inside script(1),
// a new pty that is the jail's controlling terminal, its foreground process
// group the jail's: a caller at a terminal.
func underScript(ctx context.Context, args ...string) *exec.Cmd {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return exec.CommandContext(ctx, "script", "-q", "-e", "-c", jailBin+" "+strings.Join(quoted, " "), "/dev/null")
}

// noTerminal is an analysis that reports what it has of its caller's
// terminal: its tty_nr (/proc/self/stat, 0 without a controlling
// terminal), whether /dev/tty opens, and whether it can make itself the
// terminal's foreground process group.
//
// SIGTTOU is ignored: in the caller's session, from the init's process
// group (a background one), TIOCSPGRP would stop the analysis instead.
const noTerminal = `import fcntl, os, signal, struct, termios
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
print("tty_nr", open("/proc/self/stat").read().rsplit(")", 1)[1].split()[4])
try:
    open("/dev/tty")
    print("dev_tty opened")
except OSError as e:
    print("dev_tty", e.errno)
try:
    fcntl.ioctl(0, termios.TIOCSPGRP, struct.pack("i", os.getpgrp()))
    print("tiocspgrp ok")
except OSError as e:
    print("tiocspgrp", e.errno)
`

// TestNoControllingTerminal: run from a terminal, the analysis has a
// session of its own with no controlling terminal (tty_nr 0, /dev/tty
// ENXIO, TIOCSPGRP on the terminal ENOTTY), and a ^C typed at the
// terminal still cancels the run.
func TestNoControllingTerminal(t *testing.T) {
	requireRoot(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatalf("script(1) (util-linux's bsdutils) not found: %v", err)
	}
	t.Run("session", func(t *testing.T) {
		root := tmpRoot(t)
		ctx, cancel := context.WithTimeout(context.Background(), hostileDeadline)
		defer cancel()
		cmd := underScript(ctx, "run", "--id", runID(t, "tty"), "--tmp-root", root, "--", "/usr/bin/python3", "-c", noTerminal)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("the run did not end within %s:\n%s", hostileDeadline, out)
		}
		if err != nil {
			t.Fatalf("script: %v\n%s", err, out)
		}
		got := strings.ReplaceAll(string(out), "\r", "")
		for _, want := range []string{"tty_nr 0\n", "dev_tty 6\n", "tiocspgrp 25\n"} { // ENXIO, ENOTTY
			if !strings.Contains(got, want) {
				t.Errorf("the analysis under a terminal said %q, want %q in it", got, want)
			}
		}
	})
	t.Run("ctrl-c", func(t *testing.T) {
		root := tmpRoot(t)
		rep := filepath.Join(root, "report.json")
		cmd := underScript(context.Background(), "run", "--id", runID(t, "ttyc"), "--tmp-root", root, "--report", rep,
			"--", "/bin/sh", "-c", "echo started; exec sleep 30")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		started := make(chan bool, 1)
		go func() {
			s := bufio.NewScanner(out)
			for s.Scan() {
				if strings.Contains(s.Text(), "started") {
					started <- true
				}
			}
			close(started)
		}()
		select {
		case ok := <-started:
			if !ok {
				t.Fatal("the run ended before its analysis said started")
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the analysis did not start within 30 s")
		}
		in.Write([]byte{3}) // ^C, which the pty turns into SIGINT for its foreground group
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the run did not end within 30 s of ^C")
		}
		b, err := os.ReadFile(rep)
		if err != nil {
			t.Fatalf("no report: %v", err)
		}
		var r report.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != report.StatusCancelled || r.ExitCode != 130 {
			t.Errorf("after ^C: status %s, exit %d, want cancelled, 130\n%s", r.Status, r.ExitCode, bytes.TrimSpace(b))
		}
	})
}
