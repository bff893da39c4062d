package relay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The analysis' stdout and stderr, bounded.
//
// Every stdout and stderr of the caller's that is not a terminal reaches
// the analysis as the write end of a pipe of the jail's: the jail copies
// what arrives into the caller's own descriptor under a byte budget per
// stream (limits.StdioBytes). Two reasons:
//
//   - The bound. Whatever reads the caller's end (a platform capturing
//     stdout in memory, a log on a small disk) gets at most the budget: the
//     first half as it is written, the last half (kept in a ring) at the
//     end, and between them one line saying how many bytes were dropped.
//     The jail holds at most the tail's half per stream, whatever the
//     analysis writes.
//   - The caller's file. A descriptor handed to the analysis as it is
//     shares its open file description with the caller: for a regular file
//     the analysis could clear O_APPEND (fcntl F_SETFL), seek to 0 and
//     write over what the caller wrote before the run (`scidex-jail run ...
//     >>log`); a block device is the same with any offset in reach.
//     Relayed, the caller's flags decide where the bytes land and the
//     analysis holds nothing of the file.
//
// The last 4 KiB of each stream are kept whether or not the budget is hit:
// the report's streams, and the failed analysis' last words in its notes.
// /dev/null is relayed too (its tail is the report's); a terminal is not:
// a person is watching it, a program (a progress bar, a REPL) may need it
// to be a terminal, and the person can stop what they do not want to read.
//
// stdin is always handed over. It is open for reading only (F_SETFL cannot
// change the access mode), so the analysis can only move the offset the
// caller reads from next, as any program given a file as stdin can; a
// relay would read ahead of the analysis, leave that offset anywhere, and
// take away seeking and mmap, which some readers of a file need.
//
// A stdout and stderr that are one open file description (`>>log 2>&1`;
// kcmp(2) KCMP_FILE tells) share one pipe, which keeps their order, and
// one budget; the report gives its numbers under stdout.

// kcmpFile is KCMP_FILE of linux/kcmp.h, which golang.org/x/sys/unix does
// not name: do two descriptors of two processes refer to one open file
// description.
const kcmpFile = 0

// callerStall is how long, once the run's processes are gone, the
// caller's pipe may take no byte before the relay stops writing to it: a
// caller that never reads what it handed over must not hold the run (and
// a server's place) for ever. Long enough for a slow reader; a test waits
// it out.
const callerStall = 10 * time.Second

// relayIdle is how long a relay still open after the run's tree is gone
// may read nothing before it is cut: only a process outside the run can
// hold the pipe then (the analysis passed its end out over a socket), and
// it must not keep the run from ending.
const relayIdle = time.Second

// Relay is the run's relayed streams and the stdio the init gets.
type Relay struct {
	stdio   [3]*os.File // the init's 0, 1 and 2
	streams []*stream
	merged  bool // stdout and stderr are one stream
}

// Stdio is what the init is given as the analysis' stdio: the pipes in
// place of the caller's files that are relayed, the caller's other
// descriptors as they are.
func (r *Relay) Stdio() []*os.File { return r.stdio[:] }

// stream is one pipe the analysis writes into and the caller's descriptor
// its bytes are copied to.
type stream struct {
	name string   // "stdout", "stderr", "stdout and stderr"
	fd   int      // 1 or 2: which the report names it by
	r, w *os.File // the jail's read end; the write end, the init's once handed over (nil: closed)
	dst  *os.File // the caller's own, or for a pipe a description of it of the relay's (ownEnd)
	own  bool     // dst is the relay's, closed with the stream
	done chan struct{}
	// Set by copy, read after done: what of the stream is delivered
	// (relay_budget.go).
	cut cut

	read    atomic.Int64 // bytes read from the pipe
	sent    atomic.Int64 // bytes written to dst (the marker's too)
	writing atomic.Bool  // in a write to dst: busy, not idle
	// stalled: the caller took no byte for callerStall once the run's
	// processes were gone, and the write was cut.
	stalled atomic.Bool
	// Set by copy, read after done.
	written int64 // bytes that reached dst
	werr    error // the first write to dst that failed; nothing more was written
	rerr    error // a read of the pipe that failed (cut: held open)
}

// relayed says whether the caller's stdout or stderr f is relayed:
// anything but a terminal (TCGETS answers).
func relayed(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err != nil
}

// New decides, from the kinds of the caller's stdio, which of stdout
// and stderr are relayed, and makes their pipes and copiers, each bounded
// to budget bytes (0: no budget). nil: none is (two terminals), and the
// init gets stdio as it is.
func New(stdio [3]*os.File, budget int64) (*Relay, error) {
	var kinds [3]bool
	for i := 1; i <= 2; i++ {
		kinds[i] = relayed(stdio[i])
	}
	if !kinds[1] && !kinds[2] {
		return nil, nil
	}
	r := &Relay{stdio: stdio}
	names := [3]string{1: "stdout", 2: "stderr"}
	one := kinds[1] && kinds[2] && sameDescription(stdio[1], stdio[2])
	if one {
		names[1] = "stdout and stderr"
		r.merged = true
	}
	for i := 1; i <= 2; i++ {
		if !kinds[i] {
			continue
		}
		if i == 2 && one {
			r.stdio[2] = r.stdio[1]
			break
		}
		s, err := newStream(names[i], i, stdio[i], budget)
		if err != nil {
			r.Drain()
			return nil, err
		}
		r.streams = append(r.streams, s)
		r.stdio[i] = s.w
	}
	return r, nil
}

// sameDescription says whether a and b are one open file description. A
// kernel without kcmp (CONFIG_KCMP) says no: two pipes, each stream's
// order kept but not their interleaving.
func sameDescription(a, b *os.File) bool {
	pid := uintptr(os.Getpid())
	r, _, errno := unix.Syscall6(unix.SYS_KCMP, pid, pid, kcmpFile, a.Fd(), b.Fd(), 0)
	return errno == 0 && r == 0
}

// newStream makes the pipe for dst, fd 1 or 2 of the analysis, and starts
// copying it under budget.
func newStream(name string, fd int, dst *os.File, budget int64) (*stream, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("make the pipe that relays the analysis' %s: %w", name, err)
	}
	// The read end non-blocking, so that the runtime's poller waits on it
	// (and a deadline can cut it); the write end, the analysis', blocking
	// as a program expects its stdout to be. They are two open file
	// descriptions: the flag of one is not the other's.
	if err := unix.SetNonblock(p[0], true); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, fmt.Errorf("make the pipe that relays the analysis' %s: %w", name, err)
	}
	s := &stream{name: name, fd: fd, r: os.NewFile(uintptr(p[0]), name+"-relay"), w: os.NewFile(uintptr(p[1]), name), dst: dst, done: make(chan struct{}), cut: newCut(budget)}
	if own := ownEnd(dst); own != nil {
		s.dst, s.own = own, true
	}
	go s.copy()
	return s, nil
}

// copy reads the pipe to its end, every chunk through the budget's cut,
// then delivers the kept tail.
func (s *stream) copy() {
	defer close(s.done)
	defer s.r.Close()
	if s.own {
		defer s.dst.Close()
	}
	buf := make([]byte, 64<<10) // a pipe holds 64 KiB unless resized: no read returns more
	for {
		n, err := s.r.Read(buf)
		if n > 0 {
			s.read.Add(int64(n))
			s.deliver(s.cut.head(buf[:n]))
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.rerr = err
			}
			break
		}
	}
	if dropped := s.cut.dropped(); dropped > 0 {
		s.send([]byte(dropMarker(s.name, dropped, s.cut.budget)))
	}
	s.deliver(s.cut.tail())
}

// deliver writes bytes of the analysis' to the caller's descriptor,
// counted as delivered.
func (s *stream) deliver(p []byte) { s.written += int64(s.send(p)) }

// send writes p to the caller's descriptor; after a write has failed (a
// full disk, EIO), the rest is read and dropped, so the analysis never
// waits on a pipe no one reads, and nothing is written after a gap.
//
// It writes at most a pipe's worth at a time and counts each piece as
// sent: await takes a caller that took no byte for callerStall as gone,
// and a whole tail (up to half the budget) written in one call would look
// so to a reader that is slow but reading.
func (s *stream) send(p []byte) int {
	total := 0
	for s.werr == nil && len(p) > 0 {
		piece := p[:min(len(p), sendPiece)]
		s.writing.Store(true)
		n, err := s.dst.Write(piece)
		s.writing.Store(false)
		s.sent.Add(int64(n))
		total += n
		p = p[n:]
		if err != nil {
			s.werr = err
		}
	}
	return total
}

// sendPiece is the most send writes at once: what a pipe holds unless
// resized.
const sendPiece = 64 << 10

// Handed closes the jail's copies of the write ends, once the init has
// them (or will never have them): the relay ends when the run's processes
// have all closed theirs.
func (r *Relay) Handed() {
	if r == nil {
		return
	}
	for _, s := range r.streams {
		if s.w != nil {
			s.w.Close()
			s.w = nil
		}
	}
}

// Drain waits until every stream has copied its last byte, and returns
// what could not be delivered. Called once the run's processes are gone:
// a pipe still open then is held from outside the run, and is cut once it
// has been idle for relayIdle.
func (r *Relay) Drain() []string {
	if r == nil {
		return nil
	}
	r.Handed()
	var lost []string
	for _, s := range r.streams {
		s.await()
		if msg := s.undelivered(); msg != "" {
			lost = append(lost, msg)
		}
	}
	return lost
}

// await waits for the stream's end, cutting the pipe once idle for
// relayIdle, and the write to the caller once it has taken no byte for
// callerStall. The run's processes are gone: what the pipe held is read
// at once, so a copier found waiting to read at two ticks in a row waits
// on a holder outside the run, however often that one writes (a byte a
// second must not hold the run), and is cut too.
func (s *stream) await() {
	t := time.NewTicker(relayIdle)
	defer t.Stop()
	last, lastSent := s.read.Load(), s.sent.Load()
	var stalled time.Duration
	waited := 0 // ticks in a row that found the copier not writing
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			n, sent, writing := s.read.Load(), s.sent.Load(), s.writing.Load()
			waited++
			if writing {
				waited = 0
			}
			switch {
			case !writing || sent != lastSent:
				stalled = 0
			case stalled < callerStall:
				stalled += relayIdle
			case !s.stalled.Load():
				// Only the relay's own description of a pipe can
				// be cut; a caller's file or socket, written as it
				// is, holds the run as it held the analysis.
				if s.dst.SetWriteDeadline(time.Now()) == nil {
					s.stalled.Store(true)
				}
			}
			if n == last && !writing || waited >= 2 {
				s.r.SetReadDeadline(time.Now())
				<-s.done
				return
			}
			last, lastSent = n, sent
		}
	}
}

// ownEnd is a description of the caller's pipe dst of the relay's own,
// opened through /proc/self/fd and non-blocking, so that a write to it
// can be cut (a deadline) while the caller's description and its flags
// stay as they are; nil when dst is not a pipe or cannot be opened so (no
// reader left: the writes fail as they would).
func ownEnd(dst *os.File) *os.File {
	var st unix.Stat_t
	if err := unix.Fstat(int(dst.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return nil
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", dst.Fd()), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), dst.Name())
}

// undelivered says what of the stream did not reach the caller; "": all.
func (s *stream) undelivered() string {
	total := s.read.Load()
	switch {
	case s.stalled.Load() && errors.Is(s.werr, os.ErrDeadlineExceeded):
		return fmt.Sprintf("the analysis' %s: the caller took no byte of it for %s once the run's processes were gone; %d of its %d bytes were delivered, the rest read and dropped", s.name, callerStall, s.written, total)
	case s.werr != nil:
		return fmt.Sprintf("the analysis' %s: %d of its %d bytes were written to the caller's file, then a write failed (%v); the rest was read and dropped", s.name, s.written, total, s.werr)
	case errors.Is(s.rerr, os.ErrDeadlineExceeded):
		return fmt.Sprintf("the analysis' %s: still held open after the run's processes were gone (passed out of the run); relayed %d bytes until then, the rest dropped", s.name, total)
	case s.rerr != nil:
		return fmt.Sprintf("the analysis' %s: relayed %d bytes, then reading its pipe failed (%v): a bug to report", s.name, total, s.rerr)
	}
	return ""
}
