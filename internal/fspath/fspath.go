// Package fspath is the two path facts every layer of the jail needs and
// none may take from another: whether a path lies within a directory, and
// what to call a file's type in a message. It imports no package of this
// module, so the kernel facilities (landlock) and the jail's own packages
// share it without depending on each other.
package fspath

import (
	"io/fs"
	"strings"
	"syscall"
)

// Within reports whether p is dir or lies below it; both clean and
// absolute.
func Within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Kind names a file type for a message, with its article: "a directory",
// "a FIFO", "a character device", ...
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an unknown kind of file"
}

// StatKind is Kind of a stat(2) st_mode.
func StatKind(mode uint32) string {
	var t fs.FileMode
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		t = fs.ModeDir
	case syscall.S_IFLNK:
		t = fs.ModeSymlink
	case syscall.S_IFIFO:
		t = fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		t = fs.ModeSocket
	case syscall.S_IFCHR:
		t = fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		t = fs.ModeDevice
	default:
		t = fs.ModeIrregular
	}
	return Kind(t)
}
