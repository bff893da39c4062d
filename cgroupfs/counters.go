package cgroupfs

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// counters are a leaf's counter files (Usage's), each opened at its first
// read (Create makes one) and kept until the leaf is removed; every later
// read is one pread from the file's start. Opening a v1 cgroup file is
// most of its cost: Usage's nine files took 57 us opened each time and
// 5 us read through kept descriptors here, and a served run reads them
// twice on the request's path (its slot's base when it takes it, and its
// end), its leaf made ahead with the slot.
//
// What is read is never stale: a cgroup file's content is made at each
// read from its start (the kernel's seq_file restarts at offset 0), and
// the descriptor is the leaf's own file, which no one can swap for
// another's while the leaf's directory stands (a directory made again at
// its path is a new cgroup: the kept descriptor then reads ENODEV, an
// error, never the other's counters). A missing file is not kept: it is
// looked for again at the next read, as before.
type counters struct {
	mu  sync.Mutex
	fds map[string]int // path -> O_RDONLY descriptor
}

// read reads the file at path; ok is false when it does not exist.
func (c *counters) read(path string) (data string, ok bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fd, kept := c.fds[path]
	if !kept {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		for err == unix.EINTR {
			fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		}
		if errors.Is(err, unix.ENOENT) {
			return "", false, nil
		}
		if err != nil {
			return "", false, &os.PathError{Op: "open", Path: path, Err: err}
		}
		if c.fds == nil {
			c.fds = map[string]int{}
		}
		c.fds[path] = fd
	}
	b, err := sysfile.ReadAt(fd, path)
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// close closes every kept descriptor; a read after it opens them again.
func (c *counters) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	c.fds = nil
}

// readOptional reads a file that older kernels or unmounted controllers may
// lack, opened for this read alone; ok is false when it does not exist.
func readOptional(path string) (data string, ok bool, err error) {
	b, err := sysfile.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// reader reads a file as readOptional does: readOptional itself, or a
// leaf's kept counters' read.
type reader func(path string) (data string, ok bool, err error)

// keyedOptional reads a flat keyed file; a missing file gives an empty map.
func keyedOptional(read reader, path string) (map[string]int64, error) {
	data, ok, err := read(path)
	if err != nil || !ok {
		return map[string]int64{}, err
	}
	return parseKeyed(path, data)
}

// intOptional reads a one-integer file; a missing file gives 0.
func intOptional(read reader, path string) (int64, error) {
	data, ok, err := read(path)
	if err != nil || !ok {
		return 0, err
	}
	return parseInt(path, data)
}

// readInt reads a one-integer file that must exist.
func readInt(read reader, path string) (int64, error) {
	data, ok, err := read(path)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, &os.PathError{Op: "open", Path: path, Err: unix.ENOENT}
	}
	return parseInt(path, data)
}
