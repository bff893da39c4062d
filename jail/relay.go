package jail

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The analysis' stdout and stderr, when the caller's is a file.
//
// A descriptor handed to the analysis as it is shares its open file
// description with the caller. For a regular file that is the caller's
// data at risk: the analysis can clear O_APPEND on it (fcntl F_SETFL), seek
// to 0 and write over what the caller wrote before the run
// (`scidex-jail run ... >>log`). A block device is the same, with any
// offset of the device in reach. Such a stdout or stderr is relayed: the
// init gets the write end of a pipe of the jail's, and the jail copies
// what arrives into the caller's own descriptor, so the caller's flags
// (O_APPEND or not) decide where it lands and the analysis holds nothing
// of the file. A TTY, a pipe, a socket or a character device (/dev/null)
// has no offset to move and is handed over as it is: no pipe, no copy.
//
// stdin is always handed over. It is open for reading only (F_SETFL cannot
// change the access mode), so the analysis can only move the offset the
// caller reads from next, as any program given a file as stdin can; a
// relay would read ahead of the analysis, leave that offset anywhere, and
// take away seeking and mmap, which some readers of a file need.
//
// A stdout and stderr that are one open file description (`>>log 2>&1`;
// kcmp(2) KCMP_FILE tells) share one pipe, which keeps their order.

// kcmpFile is KCMP_FILE of linux/kcmp.h, which golang.org/x/sys/unix does
// not name: do two descriptors of two processes refer to one open file
// description.
const kcmpFile = 0

// relayIdle is how long a relay still open after the run's tree is gone
// may read nothing before it is cut: only a process outside the run can
// hold the pipe then (the analysis passed its end out over a socket), and
// it must not keep the run from ending.
const relayIdle = time.Second

// relay is the run's relayed streams and the stdio the init gets.
type relay struct {
	stdio   [3]*os.File // the init's 0, 1 and 2
	streams []*stream
}

// stream is one pipe the analysis writes into and the caller's descriptor
// its bytes are copied to.
type stream struct {
	name string   // "stdout", "stderr", "stdout and stderr"
	r, w *os.File // the jail's read end; the write end, the init's once handed over (nil: closed)
	dst  *os.File // the caller's own
	done chan struct{}

	read    atomic.Int64 // bytes read from the pipe
	writing atomic.Bool  // in a write to dst: busy, not idle
	// Set by copy, read after done.
	written int64 // bytes that reached dst
	werr    error // the first write to dst that failed; nothing more was written
	rerr    error // a read of the pipe that failed (cut: held open)
}

// relayed says whether a caller's stdout or stderr of this kind is
// relayed: a regular file or a block device, where the description's
// offset and flags are the caller's data.
func relayed(mode uint32) bool {
	t := mode & unix.S_IFMT
	return t == unix.S_IFREG || t == unix.S_IFBLK
}

// newRelay decides, from the kinds of the caller's stdio, which of stdout
// and stderr are relayed, and makes their pipes and copiers. nil: none is,
// and the init gets stdio as it is (one fstat each: no cost on that path).
func newRelay(stdio [3]*os.File) (*relay, error) {
	var kinds [3]bool
	for i := 1; i <= 2; i++ {
		var st unix.Stat_t
		if err := unix.Fstat(int(stdio[i].Fd()), &st); err != nil {
			return nil, fmt.Errorf("fstat the caller's fd %d: %w", i, err)
		}
		kinds[i] = relayed(st.Mode)
	}
	if !kinds[1] && !kinds[2] {
		return nil, nil
	}
	r := &relay{stdio: stdio}
	names := [3]string{1: "stdout", 2: "stderr"}
	one := kinds[1] && kinds[2] && sameDescription(stdio[1], stdio[2])
	if one {
		names[1] = "stdout and stderr"
	}
	for i := 1; i <= 2; i++ {
		if !kinds[i] {
			continue
		}
		if i == 2 && one {
			r.stdio[2] = r.stdio[1]
			break
		}
		s, err := newStream(names[i], stdio[i])
		if err != nil {
			r.drain()
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

// newStream makes the pipe for dst and starts copying it.
func newStream(name string, dst *os.File) (*stream, error) {
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
	s := &stream{name: name, r: os.NewFile(uintptr(p[0]), name+"-relay"), w: os.NewFile(uintptr(p[1]), name), dst: dst, done: make(chan struct{})}
	go s.copy()
	return s, nil
}

// copy reads the pipe to its end, every chunk through deliver.
func (s *stream) copy() {
	defer close(s.done)
	defer s.r.Close()
	buf := make([]byte, 64<<10) // a pipe holds 64 KiB unless resized: no read returns more
	for {
		n, err := s.r.Read(buf)
		if n > 0 {
			s.read.Add(int64(n))
			s.deliver(buf[:n])
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.rerr = err
			}
			return
		}
	}
}

// deliver writes one chunk to the caller's descriptor; after a write has
// failed (a full disk, EIO), the rest is read and dropped, so the analysis
// never waits on a pipe no one reads, and nothing is written after a gap.
// A byte budget per stream (keep a head and a tail, count the rest) would
// decide here what reaches dst.
func (s *stream) deliver(p []byte) {
	if s.werr != nil {
		return
	}
	s.writing.Store(true)
	n, err := s.dst.Write(p)
	s.writing.Store(false)
	s.written += int64(n)
	if err != nil {
		s.werr = err
	}
}

// handed closes the jail's copies of the write ends, once the init has
// them (or will never have them): the relay ends when the run's processes
// have all closed theirs.
func (r *relay) handed() {
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

// drain waits until every stream has copied its last byte, and returns
// what could not be delivered. Called once the run's processes are gone:
// a pipe still open then is held from outside the run, and is cut once it
// has been idle for relayIdle.
func (r *relay) drain() []string {
	if r == nil {
		return nil
	}
	r.handed()
	var lost []string
	for _, s := range r.streams {
		s.await()
		if msg := s.undelivered(); msg != "" {
			lost = append(lost, msg)
		}
	}
	return lost
}

// await waits for the stream's end, cutting it once idle for relayIdle.
func (s *stream) await() {
	t := time.NewTicker(relayIdle)
	defer t.Stop()
	last := s.read.Load()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			n := s.read.Load()
			if n == last && !s.writing.Load() {
				s.r.SetReadDeadline(time.Now())
				<-s.done
				return
			}
			last = n
		}
	}
}

// undelivered says what of the stream did not reach the caller; "": all.
func (s *stream) undelivered() string {
	total := s.read.Load()
	switch {
	case s.werr != nil:
		return fmt.Sprintf("the analysis' %s: %d of its %d bytes were written to the caller's file, then a write failed (%v); the rest was read and dropped", s.name, s.written, total, s.werr)
	case errors.Is(s.rerr, os.ErrDeadlineExceeded):
		return fmt.Sprintf("the analysis' %s: still held open after the run's processes were gone (passed out of the run); relayed %d bytes until then, the rest dropped", s.name, total)
	case s.rerr != nil:
		return fmt.Sprintf("the analysis' %s: relayed %d bytes, then reading its pipe failed (%v): a bug to report", s.name, total, s.rerr)
	}
	return ""
}
