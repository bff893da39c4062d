package relay

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNewRelayDecides: which of the caller's stdout and stderr are relayed,
// by kind, and one pipe for one open file description.
func TestNewRelayDecides(t *testing.T) {
	dir := t.TempDir()
	open := func(name string, flag int) *os.File {
		t.Helper()
		f, err := os.OpenFile(name, flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	log := filepath.Join(dir, "log")
	file := open(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND)
	again := open(log, os.O_WRONLY|os.O_APPEND) // the same file, another description
	null := open(os.DevNull, os.O_WRONLY)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	tty := openTTY(t)
	for _, tc := range []struct {
		name           string
		stdout, stderr *os.File
		want           []string // the streams' names
	}{
		{"pipe and /dev/null", pw, null, []string{"stdout", "stderr"}},
		{"file, pipe", file, pw, []string{"stdout", "stderr"}},
		{"terminal, file", tty, file, []string{"stderr"}},
		{"file, terminal", file, tty, []string{"stdout"}},
		{"two terminals", tty, tty, nil},
		{"one description", file, file, []string{"stdout and stderr"}},
		{"two descriptions of one file", file, again, []string{"stdout", "stderr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caller := [3]*os.File{null, tc.stdout, tc.stderr}
			r, err := New(caller, 0)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			var got []string
			if r != nil {
				for _, s := range r.streams {
					got = append(got, s.name)
				}
				if r.stdio[0] != null {
					t.Errorf("stdin = %s, want the caller's, as it is", r.stdio[0].Name())
				}
				if lost := r.Drain(); lost != nil {
					t.Errorf("Drain of an unused relay = %q, want nothing lost", lost)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("New(%s, %s) streams = %q, want %q", tc.stdout.Name(), tc.stderr.Name(), got, tc.want)
			}
		})
	}
}

// TestRelayDrains: what is written into a relay's pipe reaches the
// caller's file whole, or, when writing there fails, is still read to the
// end (the writer never blocks) and said to be lost, with how much got
// through.
func TestRelayDrains(t *testing.T) {
	const size = 1 << 20 // more than a pipe holds: a relay that stopped reading would block the writer
	for _, tc := range []struct {
		name     string
		flag     int // how the caller's file is open
		wantFile int
		wantLost string
	}{
		{"delivered", os.O_WRONLY | os.O_APPEND, size, ""},
		{"write fails", os.O_RDONLY, 0, "the analysis' stdout: 0 of its 1048576 bytes were written to the caller's file, then a write failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, tc.flag, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			null, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			defer null.Close()
			r, err := New([3]*os.File{null, f, null}, 0)
			if err != nil || r == nil {
				t.Fatalf("New(file) = %v, %v; want a relay", r, err)
			}
			w := r.stdio[1]
			r.streams[0].w = nil // the analysis' end, closed by the test
			if _, err := w.Write(make([]byte, size)); err != nil {
				t.Fatalf("write into the relay's pipe: %v", err)
			}
			w.Close()
			lost := r.Drain()
			if got := len(lost); (got == 0) != (tc.wantLost == "") || got > 1 || (got == 1 && !strings.HasPrefix(lost[0], tc.wantLost)) {
				t.Errorf("Drain() = %q, want %q", lost, tc.wantLost)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != int64(tc.wantFile) {
				t.Errorf("the caller's file holds %d bytes, want %d", fi.Size(), tc.wantFile)
			}
		})
	}
}

// openTTY is the terminal side of a new pseudo-terminal.
func openTTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("the pty's number: %v", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pty's terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// BenchmarkNewRelay: what a relay costs whose stream is written nothing
// (its pipe made, its copier started and drained), to a pipe and to a
// file.
func BenchmarkNewRelay(b *testing.B) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	file, err := os.Create(filepath.Join(b.TempDir(), "log"))
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	for _, bc := range []struct {
		name string
		out  *os.File
	}{{"pipe", pw}, {"file", file}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				r, err := New([3]*os.File{null, bc.out, bc.out}, 8<<20)
				if err != nil {
					b.Fatal(err)
				}
				r.Drain()
			}
		})
	}
}
