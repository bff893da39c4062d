package landlock

import (
	"io/fs"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// openObject opens path as O_PATH, following symbolic links as Landlock
// does, and finds its type and resolved path.
//
// The common case is one openat2 with RESOLVE_NO_SYMLINKS: it succeeds
// only when no component is a symbolic link, and then the resolved path is
// the cleaned path itself. A path through a link (ELOOP), or a kernel or
// seccomp policy without openat2 (Linux < 5.6), takes the plain open, and
// the resolved path is what the kernel says it opened.
func openObject(path string) (object, error) {
	real := filepath.Clean(path)
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		if fd, err = unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
			return object{fd: -1}, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		if real, err = resolved(fd, path); err != nil {
			unix.Close(fd)
			return object{fd: -1}, err
		}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return object{fd: -1}, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	return object{fd: fd, mode: fileType(st.Mode), real: real}, nil
}

// resolved is the path the kernel opened as fd (its /proc/self/fd link):
// the file Landlock's rule is about, whatever links path went through.
// Not filepath.EvalSymlinks, which walks the path again (a second look
// that may differ) and brings os.Lstat's FileInfo, and with it time's
// formatting, into the init program.
func resolved(fd int, path string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
	if err != nil {
		return "", &fs.PathError{Op: "resolve", Path: path, Err: err}
	}
	return string(buf[:n]), nil
}

func closeObject(o object) {
	if o.fd >= 0 {
		unix.Close(o.fd)
	}
}

// fileType is the fs.FileMode type bits of a stat(2) mode.
func fileType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return 0
}
