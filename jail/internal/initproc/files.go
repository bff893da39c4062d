package initproc

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// placeFiles lays each of the plan's files (the analysis' /etc/passwd and
// /etc/group) over the view's own at its path: written to the new root's
// tmpfs under a name of its own, bound over the path (a file of the
// read-only /etc bind: a mount on top needs no write to it), then unlinked,
// so that the view's root holds nothing but what it held before, and made
// read-only. It runs before the root is sealed read-only and the init
// pivots into it.
func placeFiles(files []protocol.File) error {
	for i, f := range files {
		dst := newRoot + f.Path
		// A link would be followed by the mount, before the pivot, out of
		// the view: ours would land on the host's path in this namespace
		// and the view would still show the host's file.
		var st unix.Stat_t
		if err := unix.Lstat(dst, &st); err != nil {
			return wrap.Error("stat "+f.Path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return errors.New(f.Path + " is not a regular file on this host (mode 0" + strconv.FormatUint(uint64(st.Mode), 8) + "): the view cannot lay the analysis' own over it")
		}
		src := newRoot + "/.scidex-file-" + strconv.Itoa(i)
		if err := writeNew(src, f.Content); err != nil {
			return wrap.Error("write "+f.Path+" for the view", err)
		}
		err := unix.Mount(src, dst, "", unix.MS_BIND, "")
		if uerr := unix.Unlink(src); err == nil && uerr != nil {
			err = wrap.Error("unlink "+src, uerr)
		}
		if err != nil {
			return wrap.Error("bind the view's own "+f.Path, err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
		if err := unix.MountSetattr(unix.AT_FDCWD, dst, 0, &attr); err != nil {
			return wrap.Error("make "+f.Path+" read-only", err)
		}
	}
	return nil
}

// writeNew creates path (which must not exist) with content, readable by
// all.
func writeNew(path, content string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	b := []byte(content)
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return err
		}
		b = b[n:]
	}
	return unix.Close(fd)
}
