package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Listen makes the unix socket at path with mode 0600 (made so, not
// changed after). A path that exists is refused, unless it is a socket
// nobody answers on (one a dead server left), which is replaced.
func Listen(path string) (*net.UnixListener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s: exists and is not a socket: give a new path", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: a server already answers there: stop it or give another path", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("%s: remove the dead server's socket: %w", path, err)
		}
	}
	old := unix.Umask(0o177)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l.SetUnlinkOnClose(true)
	return l, nil
}

// ServeSocket serves each connection on l whose peer is this process's
// uid or root (SO_PEERCRED); any other is closed unanswered. It returns
// when l is closed, once every connection's runs have ended.
func (s *Server) ServeSocket(l *net.UnixListener) {
	var conns sync.WaitGroup
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				break
			}
			continue
		}
		if !allowedPeer(c) {
			c.Close()
			continue
		}
		if !s.connect() {
			// The server's memory is bounded: so many clients at once
			// are refused, with the reason.
			b, _ := json.Marshal(failReply("", &refusal{TooManyClients, strconv.Itoa(MaxConns) + " clients connected, the most this server takes: try again later"}))
			c.Write(append(b, '\n'))
			c.Close()
			continue
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer s.disconnect()
			s.Serve(c, c)
			c.Close()
		}()
	}
	conns.Wait()
}

// MaxConns bounds the clients connected at once (each holds a read
// buffer of up to MaxLine): with --max-runs and --queue, what bounds the
// server's own memory.
const MaxConns = 64

func (s *Server) connect() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns >= MaxConns {
		return false
	}
	s.conns++
	return true
}

func (s *Server) disconnect() {
	s.mu.Lock()
	s.conns--
	s.mu.Unlock()
}

// allowedPeer: the peer runs as our uid or as root. A request runs with
// the server's privileges, so no other user may make one.
func allowedPeer(c *net.UnixConn) bool {
	cred, err := PeerCred(c)
	return err == nil && Trusted(cred.Uid)
}

// PeerCred is the credentials of the process at the other end of c
// (SO_PEERCRED: for a listening socket's peer, those of the process that
// called listen(2), fixed then).
func PeerCred(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, cerr
}

// Trusted says whether a process of uid may be at the other end of a
// server's socket, either way: this process's uid, or root. The server
// holds its clients to it, and a client its server.
func Trusted(uid uint32) bool { return uid == 0 || int(uid) == syscall.Getuid() }
