package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/request"
)

// MaxLine bounds one request line; a longer one gets an error reply and
// is skipped up to its end.
const MaxLine = 1 << 20

// ProtocolVersion is the hello's protocol: 2, where a run request
// carries the run as an object ("run": a request.Request) in place of
// protocol 1's command-line arguments ("args", "cwd", "command"), and
// replies that refuse a request are events of their own (refused,
// bad_request) with the reason or the field as data.
const ProtocolVersion = 2

// Request is one line from a client (docs/serve.md): a run, or the
// cancel of one.
type Request struct {
	Op    string `json:"op"` // "run" or "cancel"
	Req   string `json:"req"`
	Stdio int    `json:"stdio,omitempty"` // 0 or 3 descriptors sent with the line
	// Run is the run asked for (op run): what `scidex-jail run` would
	// decode from its command line.
	Run *request.Request `json:"run,omitempty"`
	// Names is the language the run's values were written in, which
	// the replies' messages name them in (a bad_request's field is the
	// request's all the same): "request field" (the default), "flag"
	// (run --server: its user wrote run's flags), "keyword" (the Python
	// client: its caller wrote run()'s keywords).
	Names string `json:"names,omitempty"`
}

// namesIn are the languages a request may be named in.
var namesIn = []option.Where{option.RequestField, option.Flag, option.Keyword}

// Over is the language r's run was written in (Names).
func (r *Request) Over() option.Where {
	for _, w := range namesIn {
		if r.Names == w.String() {
			return w
		}
	}
	return option.RequestField
}

// Event is what a reply says.
type Event string

const (
	Hello    Event = "hello"    // the server's greeting: its version and protocol
	Accepted Event = "accepted" // a run request is read and admitted: from here a cancel gives a report
	Done     Event = "done"     // the run ended: its report and exit code
	// Refused: the server does not take the request now (Reason), and
	// nothing of it exists; the same request may be sent again later.
	Refused Event = "refused"
	// BadRequest: the request cannot be run as it is: Field names what to
	// fix, as the request line names it (run.limits.memory, stdio), ""
	// for the line as a whole.
	BadRequest Event = "bad_request"
	// Error: the run did not start for a reason of the host's (its ID in
	// use, no id left to lease), with run's message and exit code.
	Error Event = "error"
)

// Reason is why a request was refused.
type Reason string

const (
	QueueFull      Reason = "queue_full"       // as many runs and waiting requests as the server takes
	ShuttingDown   Reason = "shutting_down"    // the server is ending
	TooManyClients Reason = "too_many_clients" // a connection beyond MaxConns, refused with its greeting
)

// Reply is one line to a client.
type Reply struct {
	Event    Event           `json:"event"`
	Req      string          `json:"req"`
	Version  string          `json:"version,omitempty"`
	Protocol int             `json:"protocol,omitempty"`
	ExitCode *int            `json:"exit_code,omitempty"`
	Reason   Reason          `json:"reason,omitempty"` // refused
	Field    string          `json:"field,omitempty"`  // bad_request
	Error    string          `json:"error,omitempty"`  // refused, bad_request, error: the message
	Report   json.RawMessage `json:"report,omitempty"`

	status string // a done reply's report's status, for the log of a reply not delivered
}

// RequestError is a request line refused: Field is the part to fix, as
// the line names it ("": the line as a whole).
type RequestError struct {
	Field string
	Err   error
}

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

func badField(field, format string, args ...any) *RequestError {
	return &RequestError{Field: field, Err: fmt.Errorf(format, args...)}
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

// protocol1 are protocol 1's fields of a run request, which protocol 2
// carries in "run".
var protocol1 = []string{"args", "cwd", "command"}

// DecodeRequest reads one request line, refusing what is malformed with
// a *RequestError naming the field: an unknown field (at the top or in
// "run"), a value of the wrong type, protocol 1's fields, an unknown op,
// a bad name, a run without its "run" object or a command, a descriptor
// count other than 0 or 3. What the run's values mean is Resolve's to
// check.
func DecodeRequest(line []byte) (*Request, error) {
	var top struct {
		Op    string          `json:"op"`
		Req   string          `json:"req"`
		Stdio int             `json:"stdio"`
		Run   json.RawMessage `json:"run"`
		Names string          `json:"names"`
	}
	err := strictDecode(line, &top, "")
	// The decoder fills what it can read past an unknown field: the
	// request's name, for its reply.
	r := &Request{Op: top.Op, Req: top.Req, Stdio: top.Stdio, Names: top.Names}
	if err != nil {
		return r, err
	}
	if !validName(r.Req) {
		return r, badField("req", "bad request name %q: 1 to 64 letters, digits, '.', '_' or '-'", r.Req)
	}
	switch r.Op {
	case "cancel":
		if top.Run != nil || r.Stdio != 0 || r.Names != "" {
			return r, badField("op", "request %s: a cancel names its run by req alone: leave out run, stdio and names", r.Req)
		}
		return r, nil
	case "run":
	default:
		return r, badField("op", "request %s: unknown op %q: want run or cancel", r.Req, r.Op)
	}
	if r.Names != "" && r.Over().String() != r.Names {
		return r, badField("names", "request %s: names %q: give %q (the default), %q or %q", r.Req, r.Names, option.RequestField, option.Flag, option.Keyword)
	}
	if top.Run == nil {
		return r, badField("run", "request %s: no \"run\": give the run as an object, e.g. \"run\": {\"id\": \"a1\", \"cwd\": \"/abs/dir\", \"command\": [\"python3\", \"a.py\"]} (docs/serve.md)", r.Req)
	}
	r.Run = new(request.Request)
	if err := strictDecode(top.Run, r.Run, "run."); err != nil {
		return r, err
	}
	switch {
	case len(r.Run.Command) == 0:
		return r, badField("run.command", "request %s: no command: give the analysis' argv in run.command", r.Req)
	case r.Stdio != 0 && r.Stdio != 3:
		return r, badField("stdio", "request %s: stdio %d: send 0 or 3 descriptors (stdin, stdout, stderr)", r.Req, r.Stdio)
	}
	return r, nil
}

// strictDecode reads one JSON object into v, refusing unknown fields and
// values of the wrong type with a *RequestError naming the field (its
// path below prefix).
func strictDecode(data []byte, v any, prefix string) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil && d.More():
		return badField(strings.TrimSuffix(prefix, "."), "malformed request: more than one JSON value")
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		field := prefix + te.Field
		return badField(field, "malformed request: %s: a JSON %s where the request takes %s", field, te.Value, te.Type)
	}
	// encoding/json names an unknown field in its message alone.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, _ := strconv.Unquote(name)
		if prefix == "" && slices.Contains(protocol1, field) {
			return badField(field, "protocol 1's request (%q, with run's flags in \"args\"): this server speaks protocol %d, whose run request carries the run as an object, \"run\": {\"id\": ..., \"cwd\": ..., \"command\": [...], ...} (docs/serve.md)", field, ProtocolVersion)
		}
		return badField(prefix+field, "malformed request: unknown field %q: check its spelling (docs/serve.md lists the fields)", prefix+field)
	}
	return badField(strings.TrimSuffix(prefix, "."), "malformed request: %w", err)
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
	// chunk and oob are the buffers of one read, made once: what a read
	// brings is copied into buf at once (fill), and a 64 KB buffer made
	// per read was 64 KB allocated and cleared for each request.
	chunk, oob []byte
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
	if lr.chunk == nil {
		lr.chunk = make([]byte, 64<<10)
	}
	chunk := lr.chunk
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
	if lr.oob == nil {
		lr.oob = make([]byte, unix.CmsgSpace(16*4))
	}
	oob := lr.oob
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
