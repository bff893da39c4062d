package initproc

import (
	"errors"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// namesFD is the name service's listener, made in the view (placeNames)
// and handed over with the network stage's sockets; -1: none.
var namesFD = -1

// placeNames makes the name service's unix listener at
// protocol.NamesSocket in the view, before its root is sealed read-only
// (a socket file is made by bind, which a read-only root refuses); the
// supervisor gets it with the other sockets (handSockets). Its mode is
// 0666: the analysis' uid connects to it (a connect needs write
// permission on the socket, which a read-only mount does not take away).
func placeNames(want bool) error {
	if !want {
		return nil
	}
	path := newRoot + protocol.NamesSocket
	if err := mkdirAll(path[:strings.LastIndexByte(path, '/')]); err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return wrap.Error("socket for "+protocol.NamesSocket, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return wrap.Error("bind "+protocol.NamesSocket, err)
	}
	if err := unix.Fchmodat(unix.AT_FDCWD, path, 0o666, 0); err != nil {
		unix.Close(fd)
		return wrap.Error("chmod "+protocol.NamesSocket, err)
	}
	if err := unix.Listen(fd, 16); err != nil {
		unix.Close(fd)
		return wrap.Error("listen on "+protocol.NamesSocket, err)
	}
	namesFD = fd
	return nil
}

// handSockets makes the sockets of s in the run's network namespace (lo
// is up) and hands them to the supervisor over the sync socket, with the
// name service's made in the view (namesFD), one "sockets" message with
// the descriptors attached (protocol/sockets.go), then closes its own
// copies: nothing of them stays in the init, and the analysis, forked
// later, never holds one. It runs in the network stage, while the init
// still has its capabilities: 53 is a privileged port. nil s and no
// name service: nothing to do.
func handSockets(s *protocol.Sockets) error {
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if s == nil {
		s = &protocol.Sockets{}
	}
	if s.DNS {
		fd, err := bound(unix.SOCK_DGRAM, [4]byte{127, 0, 0, 1}, 53)
		if err != nil {
			return wrap.Error("make the DNS stub's socket on 127.0.0.1:53", err)
		}
		fds = append(fds, fd)
	}
	for _, p := range s.Ports {
		fd, err := listening([4]byte{}, p)
		if err != nil {
			return wrap.Error("listen on 0.0.0.0:"+strconv.Itoa(p), err)
		}
		fds = append(fds, fd)
	}
	if s.Proxy != 0 {
		fd, err := listening([4]byte{127, 0, 0, 1}, s.Proxy)
		if err != nil {
			return wrap.Error("listen on 127.0.0.1:"+strconv.Itoa(s.Proxy)+" for the proxy", err)
		}
		fds = append(fds, fd)
	}
	if namesFD >= 0 {
		fds = append(fds, namesFD)
		namesFD = -1
	}
	if len(fds) == 0 {
		return nil
	}
	line, err := protocol.EncodeInitMsg(&protocol.SocketsMade{N: len(fds)})
	if err != nil {
		return err
	}
	// One sendmsg: the descriptors travel with the line's first byte, and
	// the line is far below the socket's buffer.
	n, err := unix.SendmsgN(protocol.SyncFD, line, unix.UnixRights(fds...), nil, 0)
	for errors.Is(err, unix.EINTR) {
		n, err = unix.SendmsgN(protocol.SyncFD, line, unix.UnixRights(fds...), nil, 0)
	}
	if err == nil && n < len(line) {
		_, err = unix.Write(protocol.SyncFD, line[n:])
	}
	if err != nil {
		return wrap.Error("hand the sockets to the supervisor", err)
	}
	return nil
}

// bound is a socket of typ bound to addr:port.
func bound(typ int, addr [4]byte, port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: addr}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// listening is a TCP socket listening on addr:port. No SO_REUSEPORT: the
// analysis (another uid) cannot bind beside it and take its connections.
func listening(addr [4]byte, port int) (int, error) {
	fd, err := bound(unix.SOCK_STREAM, addr, port)
	if err != nil {
		return -1, err
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
