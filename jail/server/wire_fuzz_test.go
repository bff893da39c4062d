package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// fuzzLimit is the line limit of the fuzzed reader: small, so that the
// fuzzer reaches the over-long paths (one read, several, a tail at the
// end) without megabytes of input.
const fuzzLimit = 16

// write is one sendmsg of the fuzzed client: the bytes [start, end) of
// the stream, with fds descriptors.
type write struct {
	start, end int
	fds        int
}

// writesOf splits stream into writes by plan, a byte a write: its low six
// bits plus one are its length, its high two its descriptor count. What
// the plan does not cover goes in one write without descriptors.
func writesOf(stream, plan []byte) []write {
	var ws []write
	off := 0
	for _, p := range plan {
		if off == len(stream) {
			break
		}
		end := min(off+int(p&0x3f)+1, len(stream))
		ws = append(ws, write{start: off, end: end, fds: int(p >> 6)})
		off = end
	}
	if off < len(stream) {
		ws = append(ws, write{start: off, end: len(stream)})
	}
	return ws
}

// wantLine is what next should return for a line of the stream: the line,
// or errTooLong (too true), with where it starts and where the next begins.
type wantLine struct {
	line        string
	tooLong     bool
	start, next int
}

// linesOf is the oracle: the lines of stream as next returns them, each
// line over the limit as one errTooLong, an unterminated tail over the
// limit too (the reader cannot know the line will not end).
func linesOf(stream []byte, limit int) []wantLine {
	var ls []wantLine
	off := 0
	for {
		i := bytes.IndexByte(stream[off:], '\n')
		if i < 0 {
			if len(stream)-off > limit {
				ls = append(ls, wantLine{tooLong: true, start: off, next: len(stream)})
			}
			return ls
		}
		ls = append(ls, wantLine{line: string(stream[off : off+i]), tooLong: i > limit, start: off, next: off + i + 1})
		off += i + 1
	}
}

// openFDCount is how many descriptors this process has open.
func openFDCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) - 1 // the directory's own, open while it is read
}

// fuzzPair is socketPair without t.Cleanup: the fuzz target counts the
// descriptors open after it closed both ends.
func fuzzPair() (*net.UnixConn, int, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, -1, fmt.Errorf("socketpair: %w", err)
	}
	f := os.NewFile(uintptr(fds[0]), "server")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[1])
		return nil, -1, fmt.Errorf("server end: %w", err)
	}
	return c.(*net.UnixConn), fds[1], nil
}

// send writes ws over cli, each with as many fresh /dev/null descriptors
// as it says (the client's copies closed once sent), then shuts cli's
// writing side.
func send(cli int, stream []byte, ws []write) error {
	defer unix.Shutdown(cli, unix.SHUT_WR)
	for _, w := range ws {
		var fds []int
		for range w.fds {
			fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				closeFDs(fds)
				return fmt.Errorf("open %s: %w", os.DevNull, err)
			}
			fds = append(fds, fd)
		}
		var oob []byte
		if len(fds) > 0 {
			oob = unix.UnixRights(fds...)
		}
		err := unix.Sendmsg(cli, stream[w.start:w.end], oob, nil, unix.MSG_NOSIGNAL)
		closeFDs(fds)
		if err != nil {
			return fmt.Errorf("sendmsg of bytes %d to %d: %w", w.start, w.end, err)
		}
	}
	return nil
}

// FuzzLineReader: whatever a client sends over a unix socket, in whatever
// writes, with descriptors attached to any of them, the reader returns
// the stream's lines (none over the limit), one errTooLong for each line
// over it and goes on, gives a line only descriptors sent within it (all
// of them when one sendmsg carried the whole line), and every descriptor
// it received is either taken or closed.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("plain\nthree\n"), []byte{0x05, 0xc5})
	f.Add([]byte("a line far over the limit\nok\n"), []byte{0x40, 0x7f, 0x42})
	f.Add([]byte("half more\n"), []byte{0x83, 0x45})
	f.Add([]byte("0123456789abcdef\n0123456789abcdefg\nx"), []byte{0x10, 0xd0, 0x01})
	f.Add([]byte("0123456789abcdefg\n"), []byte{0x11}) // one over, whole in one read
	f.Add([]byte("an unterminated tail over the limit"), []byte{0xc3, 0xc3})
	f.Add([]byte("\n\n\n"), []byte{0xc0, 0x80, 0x40})
	f.Add([]byte(""), []byte{0xff})
	// The poller's own descriptors are made at its first use: before
	// counting.
	if c, cli, err := fuzzPair(); err == nil {
		c.Close()
		unix.Close(cli)
	}
	f.Fuzz(func(t *testing.T, stream, plan []byte) {
		before := openFDCount(t)
		srv, cli, err := fuzzPair()
		if err != nil {
			t.Fatal(err)
		}
		ws := writesOf(stream, plan)
		sent := make(chan error, 1)
		go func() { sent <- send(cli, stream, ws) }()

		lr := newLineReader(srv)
		lr.limit = fuzzLimit
		var got []wantLine
		var taken [][]int
		var readErr error
		for {
			line, err := lr.next()
			if errors.Is(err, errTooLong) {
				got = append(got, wantLine{tooLong: true})
				taken = append(taken, nil)
				continue
			}
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				break
			}
			if len(line) > fuzzLimit {
				t.Errorf("next() = a line of %d bytes, want at most %d", len(line), fuzzLimit)
			}
			got = append(got, wantLine{line: string(line)})
			taken = append(taken, lr.take())
		}
		lr.close()
		srv.Close() // unblocks the sender if the reader stopped early
		if err := <-sent; err != nil && readErr == nil {
			t.Error(err)
		}
		unix.Close(cli)
		if readErr != nil {
			t.Fatalf("next() = %v, want lines, errTooLong or io.EOF", readErr)
		}

		want := linesOf(stream, fuzzLimit)
		if len(got) != len(want) {
			t.Errorf("next() gave %d lines (%+v), want %d (%+v)", len(got), got, len(want), want)
		}
		for i := range min(len(got), len(want)) {
			g, w := got[i], want[i]
			if g.tooLong != w.tooLong || !w.tooLong && g.line != w.line {
				t.Errorf("line %d: next() = %q (too long: %v), want %q (too long: %v)", i, g.line, g.tooLong, w.line, w.tooLong)
				continue
			}
			checkTaken(t, i, w, taken[i], ws)
		}
		for _, fds := range taken {
			closeFDs(fds)
		}
		if after := openFDCount(t); after != before {
			t.Errorf("open descriptors after the reader closed = %d, want %d as before: received ones leaked or closed twice", after, before)
		}
	})
}

// checkTaken holds the descriptors take gave line i (w) to the writes:
// at most those of the writes that ended within it (the kernel ends a
// read with the message that carries descriptors), exactly those of a
// write that was the whole line; each open, close-on-exec.
func checkTaken(t *testing.T, i int, w wantLine, fds []int, ws []write) {
	t.Helper()
	within, whole := 0, -1
	for _, x := range ws {
		if x.end > w.start && x.end <= w.next {
			within += x.fds
		}
		if x.start == w.start && x.end == w.next {
			whole = x.fds
		}
	}
	if len(fds) > within {
		t.Errorf("line %d (%q): take() = %d descriptors, want at most %d: the writes that ended within it sent no more", i, w.line, len(fds), within)
	}
	if whole >= 0 && !w.tooLong && len(fds) != whole {
		t.Errorf("line %d (%q), sent whole in one sendmsg with %d descriptors: take() = %d of them", i, w.line, whole, len(fds))
	}
	for _, fd := range fds {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Errorf("line %d: take() gave fd %d: F_GETFD: %v, want an open descriptor", i, fd, err)
			continue
		}
		if flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("line %d: take() gave fd %d without FD_CLOEXEC", i, fd)
		}
	}
}
