package main

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// cpioWriter writes a "newc" cpio archive (the format the kernel unpacks
// into its initramfs, Documentation/driver-api/early-userspace/
// buffer-format.rst): per entry a 110-byte ASCII header of "070701" and
// thirteen 8-digit hex fields, the NUL-terminated name, padding to 4 bytes,
// the data, padding to 4 bytes; a "TRAILER!!!" entry ends the archive.
//
// The kernel's unpacker does not create missing parent directories, so the
// writer adds them itself, once each.
type cpioWriter struct {
	w    io.Writer
	off  int64
	ino  uint32
	dirs map[string]bool
	err  error
}

func newCPIOWriter(w io.Writer) *cpioWriter {
	return &cpioWriter{w: w, dirs: map[string]bool{".": true}}
}

// File adds a regular file; name is relative ("init", "lib/modules/x.ko").
func (c *cpioWriter) File(name string, perm fs.FileMode, data []byte) error {
	name, err := cleanName(name)
	if err != nil {
		return err
	}
	if err := c.Dir(path.Dir(name), 0o755); err != nil {
		return err
	}
	return c.entry(name, 0o100000|uint32(perm.Perm()), 0, 0, data)
}

// CharDev adds a character device node such as dev/console (5, 1).
func (c *cpioWriter) CharDev(name string, perm fs.FileMode, major, minor uint32) error {
	name, err := cleanName(name)
	if err != nil {
		return err
	}
	if err := c.Dir(path.Dir(name), 0o755); err != nil {
		return err
	}
	return c.entry(name, 0o020000|uint32(perm.Perm()), major, minor, nil)
}

// Dir adds a directory and its missing parents.
func (c *cpioWriter) Dir(name string, perm fs.FileMode) error {
	name, err := cleanName(name)
	if err != nil {
		return err
	}
	if c.dirs[name] {
		return nil
	}
	if err := c.Dir(path.Dir(name), 0o755); err != nil {
		return err
	}
	c.dirs[name] = true
	return c.entry(name, 0o040000|uint32(perm.Perm()), 0, 0, nil)
}

// Close writes the trailer. It does not close the underlying writer.
func (c *cpioWriter) Close() error {
	return c.entry("TRAILER!!!", 0, 0, 0, nil)
}

func cleanName(name string) (string, error) {
	clean := path.Clean(strings.TrimPrefix(name, "/"))
	if clean == ".." || strings.HasPrefix(clean, "../") || clean == "TRAILER!!!" {
		return "", fmt.Errorf("cpio entry %q: name outside the archive root", name)
	}
	return clean, nil
}

func (c *cpioWriter) entry(name string, mode, rdevMajor, rdevMinor uint32, data []byte) error {
	if c.err != nil {
		return c.err
	}
	if name != "." {
		c.ino++
	}
	nlink := 1
	if mode&0o040000 != 0 {
		nlink = 2
	}
	// Fields: ino mode uid gid nlink mtime filesize devmajor devminor
	// rdevmajor rdevminor namesize check. mtime 0 keeps archives
	// reproducible, so the cache key can be their content.
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write([]byte(name + "\x00"))
	c.pad()
	c.write(data)
	c.pad()
	return c.err
}

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.off += int64(n)
	if err != nil {
		c.err = fmt.Errorf("write cpio archive: %w", err)
	}
}

func (c *cpioWriter) pad() {
	if r := c.off % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}
