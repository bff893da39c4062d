package initproc

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

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
			return fmt.Errorf("stat %s: %w", f.Path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fmt.Errorf("%s is not a regular file on this host (mode %#o): the view cannot lay the analysis' own over it", f.Path, st.Mode)
		}
		src := newRoot + "/.scidex-file-" + strconv.Itoa(i)
		if err := writeNew(src, f.Content); err != nil {
			return fmt.Errorf("write %s for the view: %w", f.Path, err)
		}
		err := unix.Mount(src, dst, "", unix.MS_BIND, "")
		if uerr := unix.Unlink(src); err == nil && uerr != nil {
			err = fmt.Errorf("unlink %s: %w", src, uerr)
		}
		if err != nil {
			return fmt.Errorf("bind the view's own %s: %w", f.Path, err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
		if err := unix.MountSetattr(unix.AT_FDCWD, dst, 0, &attr); err != nil {
			return fmt.Errorf("make %s read-only: %w", f.Path, err)
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
