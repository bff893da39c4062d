package initproc

import (
	"errors"
	"io"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// rightsReader reads the sync socket with recvmsg, so that descriptors sent
// with the config (SCM_RIGHTS: the target's stdio, for an init started
// before its run's stdio was known) are kept; a plain read drops them. Only
// the config may carry any: those that come later are closed at once.
type rightsReader struct {
	fd    int
	oob   []byte
	fds   []int
	taken bool // the config's have been taken: close what comes after
	// arrived is called as bytes come (a func, not a time.Time field:
	// a time in a type used as an io.Reader links time's formatting
	// into the init).
	arrived func()
}

func newRightsReader(fd int) *rightsReader {
	return &rightsReader{fd: fd, oob: make([]byte, unix.CmsgSpace(4*4))}
}

func (r *rightsReader) Read(p []byte) (int, error) {
	for {
		n, oobn, _, _, err := unix.Recvmsg(r.fd, p, r.oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		r.keep(r.oob[:oobn])
		if r.arrived != nil {
			r.arrived()
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// keep collects the descriptors of one message's control data.
func (r *rightsReader) keep(oob []byte) {
	if len(oob) == 0 {
		return
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		if r.taken {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		r.fds = append(r.fds, fds...)
	}
}

// take returns the descriptors that came with the config; later ones are
// closed as they come.
func (r *rightsReader) take() []int {
	fds := r.fds
	r.fds, r.taken = nil, true
	return fds
}

// installStdio puts the three descriptors that came with the config at 0,
// 1 and 2, where the target inherits them (cfg.Stdio); without it, none
// may have come.
func installStdio(want bool, fds []int) error {
	defer func() {
		for _, fd := range fds {
			if fd > 2 {
				unix.Close(fd)
			}
		}
	}()
	if !want {
		if len(fds) != 0 {
			return errors.New("the config came with descriptors it did not ask for")
		}
		return nil
	}
	if len(fds) != 3 {
		return errors.New("the config asks for the target's stdio, but did not come with its three descriptors")
	}
	for i, fd := range fds {
		if fd == i {
			continue
		}
		if err := unix.Dup3(fd, i, 0); err != nil {
			return wrap.Error("put the target's stdio in place", err)
		}
	}
	return nil
}

// closeStdio closes the init's 0, 1 and 2, once the run's processes are
// gone. Nothing of the init writes to them after (it opens nothing, so
// no file takes their numbers).
func closeStdio() {
	for fd := 0; fd <= 2; fd++ {
		unix.Close(fd)
	}
}
