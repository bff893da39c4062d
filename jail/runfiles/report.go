package runfiles

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ReportFile is a run's report before it is written: the report's
// directory, opened without following links, and the unnamed, locked file
// (O_TMPFILE) the report is written into when the run ends. Making it when
// the run begins is the check that the report can be written, so a run
// makes one file for its report where a probe and then the write each made
// one (each a new inode: on an ext4 /tmp with many recently deleted ones,
// 0.1-0.3 ms). The file vanishes if the jail dies; nothing is named before
// Write.
type ReportFile struct {
	path string
	dir  *os.File
	f    *os.File // nil: no O_TMPFILE here; Write makes a named temporary file
}

// OpenReport makes the report file for path, as CheckDestinations resolved
// it (its directory is opened without following links); name and given
// are the option and the path as the caller gave them (--report and its
// text), for the message. Its error wraps ErrBadSpec.
func OpenReport(path, name, given string) (*ReportFile, error) {
	dir := filepath.Dir(path)
	d, err := OpenDirPath(dir, false)
	if err == nil {
		r := &ReportFile{path: path, dir: d}
		var fd int
		if fd, err = tmpfileIn(int(d.Fd()), dir); err == nil && fd < 0 {
			return r, nil
		}
		if err == nil {
			// Locked before it has a name: a sweeper never sees it unlocked.
			if err = unix.Flock(fd, unix.LOCK_EX); err == nil {
				r.f = os.NewFile(uintptr(fd), filepath.Base(path))
				return r, nil
			}
			unix.Close(fd)
			err = fmt.Errorf("lock temporary report: %w", err)
		}
		d.Close()
	}
	return nil, fmt.Errorf("%w: %s %q: %w; give a path in a directory this jail can write", ErrBadSpec, name, given, err)
}

// Write writes b as the report, whole or not at all, into the directory
// opened at the start (replaceWith), and closes r. Where the file system
// has no O_TMPFILE, the report is written under a temporary name, locked
// from the moment it is made sure to be ours.
func (r *ReportFile) Write(b []byte) error {
	defer r.Close()
	base, dfd := filepath.Base(r.path), int(r.dir.Fd())
	f, tmp := r.f, ""
	if f == nil {
		var err error
		if f, tmp, err = tempFileIn(dfd, base); err != nil {
			return fmt.Errorf("write report %s: %w", r.path, err)
		}
		defer f.Close()
	}
	if err := replaceWith(dfd, base, f, tmp, b); err != nil {
		return fmt.Errorf("write report %s: %w", r.path, err)
	}
	return nil
}

// Close lets go of the report file unwritten (it vanishes) and of its
// directory. Closing twice, or a nil r, is nothing.
func (r *ReportFile) Close() {
	if r == nil {
		return
	}
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	if r.dir != nil {
		r.dir.Close()
		r.dir = nil
	}
}
