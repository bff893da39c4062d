package fspath

import (
	"io/fs"
	"syscall"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a", "/a", true}, {"/a/b", "/a", true}, {"/ab", "/a", false}, {"/a", "/a/b", false},
		{"/", "/", true}, {"/x", "/", true}, {"/tmp/scidex-analysis-1/x", "/tmp/scidex-analysis-1", true},
	} {
		if got := Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}

func TestKind(t *testing.T) {
	for _, c := range []struct {
		mode uint32
		want string
	}{
		{syscall.S_IFREG | 0o644, "a regular file"}, {syscall.S_IFDIR, "a directory"}, {syscall.S_IFLNK, "a symbolic link"},
		{syscall.S_IFIFO, "a FIFO"}, {syscall.S_IFSOCK, "a socket"}, {syscall.S_IFCHR, "a character device"},
		{syscall.S_IFBLK, "a block device"}, {0, "an unknown kind of file"},
	} {
		if got := StatKind(c.mode); got != c.want {
			t.Errorf("StatKind(%#o) = %q, want %q", c.mode, got, c.want)
		}
	}
	if got := Kind(fs.ModeDevice | fs.ModeCharDevice); got != "a character device" {
		t.Errorf("Kind(char device) = %q, want a character device", got)
	}
}
