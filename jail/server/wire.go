package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"

	"golang.org/x/sys/unix"
)

// MaxLine bounds one request line; a longer one gets an error reply and
// is skipped up to its end.
const MaxLine = 1 << 20

// ProtocolVersion is the hello's protocol.
const ProtocolVersion = 1

// Request is one line from a client (docs/serve.md).
type Request struct {
	Op      string   `json:"op"` // "run" or "cancel"
	Req     string   `json:"req"`
	Cwd     string   `json:"cwd,omitempty"`
	Args    []string `json:"args,omitempty"`
	Command []string `json:"command,omitempty"`
	Stdio   int      `json:"stdio,omitempty"` // 0 or 3 descriptors sent with the line
}

// Reply is one line to a client.
type Reply struct {
	Event    string          `json:"event"` // hello, accepted, done, error
	Req      string          `json:"req"`
	Version  string          `json:"version,omitempty"`
	Protocol int             `json:"protocol,omitempty"`
	ExitCode *int            `json:"exit_code,omitempty"`
	Error    string          `json:"error,omitempty"`
	Report   json.RawMessage `json:"report,omitempty"`

	status string // a done reply's report's status, for the log of a reply not delivered
}

// validName says whether a request's name is 1 to 64 letters, digits,
// '.', '_' or '-'. A loop, not a regexp: the bounded repetition compiles
// into 64 copies of the class, and a package-level regexp is compiled at
// every start of the binary, `run` included (1.1 ms of it).
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// DecodeRequest reads one request line, refusing what is malformed:
// unknown fields, an unknown op, a bad name, a run without a command or
// with a relative cwd, a descriptor count other than 0 or 3.
func DecodeRequest(line []byte) (*Request, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	var r Request
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("malformed request: %w", err)
	}
	if d.More() {
		return nil, errors.New("malformed request: more than one JSON value on the line")
	}
	if !validName(r.Req) {
		return &r, fmt.Errorf("bad request name %q: 1 to 64 letters, digits, '.', '_' or '-'", r.Req)
	}
	switch r.Op {
	case "cancel":
		return &r, nil
	case "run":
	default:
		return &r, fmt.Errorf("request %s: unknown op %q: want run or cancel", r.Req, r.Op)
	}
	switch {
	case len(r.Command) == 0:
		return &r, fmt.Errorf("request %s: no command: give the analysis' argv in \"command\"", r.Req)
	case r.Cwd == "" || r.Cwd[0] != '/':
		return &r, fmt.Errorf("request %s: cwd %q: give the absolute directory relative paths are taken from", r.Req, r.Cwd)
	case r.Stdio != 0 && r.Stdio != 3:
		return &r, fmt.Errorf("request %s: stdio %d: send 0 or 3 descriptors (stdin, stdout, stderr)", r.Req, r.Stdio)
	}
	return &r, nil
}

// lineReader splits a connection into lines, with the descriptors that
// came with each (a unix socket; nil sock: a pipe, where none can come).
//
// A request's descriptors travel in the sendmsg of its line, one line per
// sendmsg. The kernel ends a read with the message that carries
// descriptors (unix(7): a read never joins two of them), and hands them
// over with the read that holds the start of that message: a batch
// belongs to the last line that starts within the read it came with. A
// batch no line claims (sent with a line's middle, or with nothing) is
// closed.
type lineReader struct {
	r       io.Reader
	sock    *net.UnixConn
	buf     []byte
	off     int64 // stream offset of buf[0]
	batches []batch
	owned   []int // the last line's descriptors
	skip    bool  // in a line over limit: drop up to its end
	limit   int   // MaxLine; the fuzz test sets a small one to reach it
}

// batch is descriptors received with the bytes [start, end) of the stream.
type batch struct {
	start, end int64
	fds        []int
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{r: r, limit: MaxLine}
	if c, ok := r.(*net.UnixConn); ok {
		lr.sock = c
	}
	return lr
}

// errTooLong is a line over MaxLine, skipped.
var errTooLong = fmt.Errorf("request line over %d bytes: skipped", MaxLine)

// next returns the next line, without its newline; errTooLong for one that
// was too long (the reader goes on after it); io.EOF at the end.
func (lr *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(lr.buf, '\n'); i >= 0 {
			line, start := lr.buf[:i:i], lr.off
			lr.buf, lr.off = lr.buf[i+1:], lr.off+int64(i+1)
			lr.claim(start, lr.off)
			skipped := lr.skip
			lr.skip = false
			if skipped || len(line) > lr.limit {
				closeFDs(lr.owned)
				lr.owned = nil
				if skipped {
					continue
				}
				return nil, errTooLong
			}
			return line, nil
		}
		if len(lr.buf) > lr.limit {
			lr.off += int64(len(lr.buf))
			lr.buf, lr.skip = lr.buf[:0], true
			return nil, errTooLong
		}
		if err := lr.fill(); err != nil {
			return nil, err
		}
	}
}

func (lr *lineReader) fill() error {
	chunk := make([]byte, 64<<10)
	var n int
	var err error
	if lr.sock != nil {
		n, err = lr.recv(chunk)
	} else {
		n, err = lr.r.Read(chunk)
	}
	if n > 0 {
		if lr.skip && bytes.IndexByte(chunk[:n], '\n') < 0 {
			lr.off += int64(n) // still in the long line: keep nothing of it
		} else {
			lr.buf = append(lr.buf, chunk[:n]...)
		}
		return nil
	}
	if err == nil {
		err = io.EOF
	}
	return err
}

// recv reads from the socket with the descriptors that come along, made
// close-on-exec as they arrive (MSG_CMSG_CLOEXEC): an init the server
// forks meanwhile must not inherit a client's stdio.
func (lr *lineReader) recv(chunk []byte) (int, error) {
	rc, err := lr.sock.SyscallConn()
	if err != nil {
		return 0, err
	}
	oob := make([]byte, unix.CmsgSpace(16*4))
	var n, oobn int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), chunk, oob, unix.MSG_CMSG_CLOEXEC)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if err == nil {
		err = rerr
	}
	if err == nil {
		end := lr.off + int64(len(lr.buf)+n)
		lr.keep(oob[:oobn], end-int64(n), end)
	}
	return n, err
}

func (lr *lineReader) keep(oob []byte, start, end int64) {
	if len(oob) == 0 {
		return
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		if fds, err := unix.ParseUnixRights(&m); err == nil && len(fds) > 0 {
			lr.batches = append(lr.batches, batch{start: start, end: end, fds: fds})
		}
	}
}

// claim gives the line from start to next (where the next one starts)
// the batch received with the read it is the last line to start in, and
// closes those that came before it unclaimed.
func (lr *lineReader) claim(start, next int64) {
	closeFDs(lr.owned)
	lr.owned = nil
	kept := lr.batches[:0]
	for _, b := range lr.batches {
		switch {
		case b.end <= start: // no line took it
			closeFDs(b.fds)
		case b.start <= start && next >= b.end:
			lr.owned = append(lr.owned, b.fds...)
		default: // a later line starts in its read
			kept = append(kept, b)
		}
	}
	lr.batches = kept
}

// take hands the last line's descriptors to its request, which must have
// declared as many; they are the caller's from then.
func (lr *lineReader) take() []int {
	fds := lr.owned
	lr.owned = nil
	return fds
}

// close closes every descriptor received and not taken.
func (lr *lineReader) close() {
	closeFDs(lr.owned)
	for _, b := range lr.batches {
		closeFDs(b.fds)
	}
	lr.owned, lr.batches = nil, nil
}
