package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultReplyWait is how long a reply may wait for its client to read,
// when Config.ReplyWait is 0: long enough for a client busy elsewhere (a
// Python client's reading thread held off by a long computation), short
// enough that a client that has stopped reading is found out.
const DefaultReplyWait = 30 * time.Second

// reply writes r to the client, waiting at most the server's ReplyWait
// for room in a socket (a write deadline; a pipe or file is written as
// it is). A reply that cannot be written drops the client: its
// connection is shut both ways, its runs are cancelled (each still
// writes its --report), and this reply and every later one is logged on
// the server's stderr instead (lost), so none is lost silently. A run's
// place is freed before its reply is written (carryOut): a client that
// does not read holds no place but its own runs'.
func (c *conn) reply(r Reply) {
	line, err := encodeReply(r)
	if err != nil {
		line, _ = json.Marshal(Reply{Event: Error, Req: r.Req, Error: "bug: reply could not be encoded: " + err.Error()})
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.dead.Load() {
		err := c.write(append(line, '\n'))
		if err == nil {
			return
		}
		c.dead.Store(true)
		c.s.logf("a reply could not be written to a client (%v; a reply waits at most %v for the client to read): the client is dropped, its runs cancelled", err, c.s.cfg.ReplyWait)
		if c.hangUp != nil {
			c.hangUp()
		}
		c.cancelAll()
	}
	c.lost(r)
}

// encodeReply is r's line, as json.Marshal writes it. A done reply's
// report is json.Marshal's output already (execute): compact, one line.
// encoding/json would scan and compact its 7 KB again (a RawMessage is a
// Marshaler), about half of a done reply's 0.13 ms of encoding, between
// the run's report and its client; it is put in as it is, in the place
// json.Marshal gives it (Report is Reply's last field). A report with a
// newline (not json.Marshal's) is left to json.Marshal.
func encodeReply(r Reply) ([]byte, error) {
	rep := r.Report
	if len(rep) == 0 || bytes.IndexByte(rep, '\n') >= 0 {
		return json.Marshal(r)
	}
	r.Report = nil
	head, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(head)+len(rep)+len(`,"report":`)+1)
	line = append(line, head[:len(head)-1]...) // its closing brace
	line = append(line, `,"report":`...)
	line = append(line, rep...)
	return append(line, '}'), nil
}

// write writes one line, with the server's deadline when w has one.
func (c *conn) write(line []byte) error {
	type deadliner interface{ SetWriteDeadline(time.Time) error }
	if d, ok := c.w.(deadliner); ok {
		d.SetWriteDeadline(time.Now().Add(c.s.cfg.ReplyWait)) // an error: no deadline there (a file)
	}
	_, err := c.w.Write(line)
	return err
}

// lost logs a reply that did not reach its client: a run's end (its
// request's name, its status and exit code) or a request's failure (a
// refusal, a bad request, an error). Hello and accepted replies say
// nothing the client needs once it is gone.
func (c *conn) lost(r Reply) {
	code := "none"
	if r.ExitCode != nil {
		code = fmt.Sprint(*r.ExitCode)
	}
	switch r.Event {
	case Done:
		c.s.logf("reply not delivered: request %s done, status %s, exit code %s", r.Req, r.status, code)
	case Refused, BadRequest, Error:
		c.s.logf("reply not delivered: request %q %s, exit code %s: %s", r.Req, r.Event, code, r.Error)
	case CleanupFailed:
		c.s.logf("reply not delivered: request %s cleanup failed: %s", r.Req, r.Error)
	}
}

// gone says whether the client's replies can no longer be written.
func (c *conn) gone() bool { return c.dead.Load() }

// logf writes one line to the server's log (Config.Log).
func (s *Server) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		s.cfg.Log(fmt.Sprintf(format, args...))
	}
}

// shutdownBoth ends a client's connection both ways: its reading side
// wakes the request loop (end of file), its writing side tells the
// client.
func shutdownBoth(sock *net.UnixConn) {
	if raw, err := sock.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
	}
}
