package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cmd/scidex-jail/internal/earlysig"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/server"
)

// clientReq is the name of the one request `run --server` makes on its
// connection.
const clientReq = "run"

// runVia is `run --server SOCKET`: the run is carried out by the resident
// server at SOCKET (docs/serve.md) instead of by this process, which is
// its client: it sends the run its command line asks for (its flags,
// working directory and command, as a request.Request) with its stdin,
// stdout and stderr attached, and acts on the reply as `run` acts on its
// run. The server writes --report; this
// process writes the summary where --summary says, writes the --ready-fd
// byte once the server accepted the request, asks the server to cancel
// the run on SIGTERM, SIGINT or SIGHUP, and exits with the run's status.
func (c *runCmd) runVia() error {
	summary, err := c.Summary.open()
	if err != nil {
		return err
	}
	if c.ReadyFD != 0 {
		if err := checkReadyFD(c.ReadyFD); err != nil {
			return err
		}
	}
	if len(c.afterDash) == 0 {
		// The server would refuse it with the protocol's message ("no
		// command"): the command line's is run's.
		if err := c.noCommand(); err != nil {
			return err
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return bad("cannot read the current directory: %w", err)
	}
	// Relative paths (--report, --config, --ro) go as given, with cwd:
	// the server takes them from there, as run does; its messages name
	// the values as run's flags, which is what this user wrote.
	run := c.request(cwd)
	req := server.Request{Op: "run", Req: clientReq, Run: &run, Stdio: 3, Names: option.Flag.String()}
	s, err := dialServer(c.Server)
	if err != nil {
		return err
	}
	defer s.conn.Close()
	r, err := s.run(req, c.ReadyFD)
	if err != nil {
		return err
	}
	rep, code, err := s.report(r)
	if err != nil {
		return err
	}
	tell(summary, rep)
	return exitError{code}
}

// noCommand is the error run gives for a command line with no command
// after "--": the first its spec and its checks find.
func (c *runCmd) noCommand() error {
	s, err := c.spec()
	if err != nil {
		return err
	}
	_, err = s.Validate()
	return err
}

// checkReadyFD refuses a --ready-fd that run would refuse, before the
// request is sent: the byte itself is written once the server accepted
// the request (ready).
func checkReadyFD(fd int) error {
	if fd <= 2 {
		return ready(fd) // refuses it with run's message, writing nothing
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return bad("--ready-fd %d: cannot write the ready byte there: %w; pass the write end of a pipe the jail inherits", fd, err)
	}
	return nil
}

// session is run's connection to a server.
type session struct {
	sock     string
	conn     *net.UnixConn
	replies  <-chan server.Reply
	end      *error // why replies was closed, once it is
	sent     bool   // the request is sent: a cancel can follow it
	accepted bool   // the server accepted it: the run may have started
	cancel   bool   // a cancel is asked for
}

// dialServer connects to the server at sock and reads its hello.
func dialServer(sock string) (*session, error) {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("--server %s: no server answers there: %w; start one with `scidex-jail serve --socket %s`, or run without --server", sock, err, sock)
	}
	// Checked before anything is sent, the hello read or not.
	if err := checkServer(sock, conn); err != nil {
		conn.Close()
		return nil, err
	}
	s := &session{sock: sock, conn: conn, end: new(error)}
	s.replies = readReplies(conn, s.end)
	h, err := s.next()
	switch {
	case err != nil:
	case h.Event == server.Refused:
		// A server at its limit of clients greets so, with the reason
		// (... try again later), and closes.
		err = fmt.Errorf("--server %s: refused: %s", sock, cmp.Or(h.Error, "no reason given"))
	case h.Event != server.Hello || h.Protocol != server.ProtocolVersion:
		err = fmt.Errorf("--server %s: the server greeted with %q, protocol %d; want hello, protocol %d: start a server of this version (scidex-jail serve --socket %s)",
			sock, h.Event, h.Protocol, server.ProtocolVersion, sock)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// readReplies reads the server's lines into the channel it returns, which
// it closes at the end of the connection, with the reason in *end.
func readReplies(r io.Reader, end *error) <-chan server.Reply {
	ch := make(chan server.Reply, 4)
	go func() {
		defer close(ch)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				*end = err
				return
			}
			var rep server.Reply
			if err := json.Unmarshal(line, &rep); err != nil {
				*end = fmt.Errorf("a reply that is not JSON: %w", err)
				return
			}
			ch <- rep
		}
	}()
	return ch
}

// run sends req with this process's stdio and waits for its end: the
// done or error reply. Once the request is accepted, it writes the
// --ready-fd byte (readyFD not 0).
func (s *session) run(req server.Request, readyFD int) (server.Reply, error) {
	if err := s.send(req, 0, 1, 2); err != nil {
		return server.Reply{}, err
	}
	s.sent = true
	if s.cancel {
		s.askCancel()
	}
	var readyErr error
	for {
		r, err := s.next()
		if err != nil {
			return r, err
		}
		if r.Req != clientReq && r.Req != "" {
			continue // not ours: the connection carries one request
		}
		switch r.Event {
		case server.Accepted:
			s.accepted = true
			if readyFD != 0 {
				if readyErr = ready(readyFD); readyErr != nil {
					s.askCancel() // the caller cannot know when to signal
				}
			}
		case server.Done:
			if readyErr != nil {
				return r, readyErr
			}
			return r, nil
		case server.Refused:
			return r, fmt.Errorf("--server %s: refused: %s", s.sock, r.Error)
		case server.BadRequest, server.Error:
			return r, errors.New(r.Error)
		}
	}
}

// next waits for the server's next reply. A SIGTERM, SIGINT or SIGHUP
// meanwhile asks the server to cancel the run, as it cancels run: the
// reply will be its report. The other signals run passes to the analysis
// are not passed on (the protocol has no request for them).
func (s *session) next() (server.Reply, error) {
	for {
		select {
		case r, ok := <-s.replies:
			if !ok {
				return server.Reply{}, s.ended()
			}
			return r, nil
		case sig := <-earlysig.C:
			if sig == syscall.SIGTERM || sig == syscall.SIGINT || sig == syscall.SIGHUP {
				s.askCancel()
			}
		}
	}
}

// askCancel sends the cancel of the run, or has it sent right after the
// request. A cancel that cannot be sent means the connection is gone:
// the server cancels the run itself then, and next says so.
func (s *session) askCancel() {
	s.cancel = true
	if s.sent {
		s.send(server.Request{Op: "cancel", Req: clientReq})
	}
}

// send writes one request line in one sendmsg, with fds attached
// (SCM_RIGHTS); what the socket did not take of a long line follows it.
func (s *session) send(req server.Request, fds ...int) error {
	line, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("bug: encode the request: %w", err)
	}
	line = append(line, '\n')
	var rights []byte
	if len(fds) > 0 {
		rights = unix.UnixRights(fds...)
	}
	n, _, err := s.conn.WriteMsgUnix(line, rights, nil)
	if err == nil && n < len(line) {
		_, err = s.conn.Write(line[n:])
	}
	if err != nil {
		return fmt.Errorf("--server %s: send the request: %w", s.sock, err)
	}
	return nil
}
