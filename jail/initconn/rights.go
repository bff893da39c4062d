package initconn

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// maxRights is the kernel's SCM_MAX_FD: the most descriptors one message
// carries, and so the most sockets an init hands over.
const maxRights = 253

// rightsReader reads the sync socket with recvmsg, keeping the
// descriptors that come with the init's "sockets" message (SCM_RIGHTS; a
// plain read would drop them, closed by the kernel). readInit takes them
// when it decodes that message (attach); whatever is left when the
// stream ends is closed.
type rightsReader struct {
	rc  syscall.RawConn
	oob []byte
	fds []int
}

// newRightsReader reads f through its RawConn, never its bare number:
// the supervisor closes f while this reads (Conn.Close), and a read by
// number could then land on a file that took the number over; through
// the RawConn the number stays f's until the read returns, and a read
// after the close fails.
func newRightsReader(f *os.File) (*rightsReader, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &rightsReader{rc: rc, oob: make([]byte, unix.CmsgSpace(4*maxRights))}, nil
}

func (r *rightsReader) Read(p []byte) (int, error) {
	for {
		var n, oobn int
		var rerr error
		err := r.rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, r.oob, unix.MSG_CMSG_CLOEXEC)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		if err == nil {
			err = rerr
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		r.keep(r.oob[:oobn])
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r *rightsReader) keep(oob []byte) {
	if len(oob) == 0 {
		return
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		if fds, err := unix.ParseUnixRights(&m); err == nil {
			r.fds = append(r.fds, fds...)
		}
	}
}

// attach gives a "sockets" message the descriptors that came with it:
// exactly its N, or an error (and every descriptor closed).
func (r *rightsReader) attach(m *protocol.SocketsMade) error {
	fds := r.fds
	r.fds = nil
	if len(fds) != m.N {
		closeAll(fds)
		return fmt.Errorf("a sockets message of %d descriptors came with %d", m.N, len(fds))
	}
	m.Files = make([]*os.File, len(fds))
	for i, fd := range fds {
		m.Files[i] = os.NewFile(uintptr(fd), "init-socket")
	}
	return nil
}

// close closes what came and no message took.
func (r *rightsReader) close() {
	closeAll(r.fds)
	r.fds = nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// CloseSockets closes the descriptors of a "sockets" message nobody
// serves.
func CloseSockets(m *protocol.SocketsMade) {
	for _, f := range m.Files {
		f.Close()
	}
	m.Files = nil
}
