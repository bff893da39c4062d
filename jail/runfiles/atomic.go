package runfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// replaceWith writes b to f, a locked file in dfd (unnamed where tmp is
// ""), gives it a temporary name once complete, and renames it over base:
// readers see the old file or the whole new one, never a part. On every
// path it returns from, no temporary file is left; after a SIGKILL at the
// wrong moment, at most one, unlocked, which the next run or `gc` removes.
func replaceWith(dfd int, base string, f *os.File, tmp string, b []byte) error {
	named := tmp != ""
	fail := func(err error) error {
		if named {
			unix.Unlinkat(dfd, tmp, 0)
		}
		return err
	}
	// No fsync: the rename makes the report appear whole or not at all to
	// readers, which is the promise; durability across a power cut is not
	// worth milliseconds on every run.
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if !named {
		tmp = tempReportName(base)
		if err := linkTmpfile(f, dfd, tmp); err != nil {
			return err
		}
		named = true
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return fail(fmt.Errorf("rename into place: %w", err))
	}
	return nil
}

// tempFileIn makes a locked file to write in dirfd: unnamed (tmp "") when
// the file system has O_TMPFILE, else under a temporary name.
func tempFileIn(dfd int, base string) (*os.File, string, error) {
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		// Locked before it has a name: a sweeper never sees it unlocked.
		if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
			unix.Close(fd)
			return nil, "", fmt.Errorf("lock temporary report: %w", err)
		}
		return os.NewFile(uintptr(fd), base), "", nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, "", fmt.Errorf("create temporary report: %w", err)
	}
	for attempt := 0; attempt < 10; attempt++ {
		tmp := tempReportName(base)
		fd, err := unix.Openat(dfd, tmp, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, "", fmt.Errorf("create temporary report: %w", err)
		}
		// Between the create and the lock a sweeper may have taken the
		// unlocked file for a leftover. If it holds the lock, or has
		// already removed the name, start again under another name.
		if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil && st.Nlink > 0 {
				return os.NewFile(uintptr(fd), tmp), tmp, nil
			}
		}
		unix.Close(fd)
	}
	return nil, "", fmt.Errorf("create temporary report: another process keeps taking it")
}

// linkTmpfile gives an O_TMPFILE file a name in dfd.
func linkTmpfile(f *os.File, dfd int, name string) error {
	// AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc/self/fd works for
	// anyone who may open the file.
	err := unix.Linkat(int(f.Fd()), "", dfd, name, unix.AT_EMPTY_PATH)
	if err != nil {
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), dfd, name, unix.AT_SYMLINK_FOLLOW)
	}
	if err != nil {
		return fmt.Errorf("name the temporary report: %w", err)
	}
	return nil
}

// deliveryFailed turns the report into a delivery failure: the analysis'
// own status and exit code move to analysis_status and analysis_exit_code,

// OpenDirPath opens an absolute, resolved directory path one component at
// a time without following links, and with mkdir makes the components
// that are missing (mode 0755). A component that became a link since the
// path was checked is refused (ELOOP/ENOTDIR), never followed.
func OpenDirPath(path string, mkdir bool) (*os.File, error) {
	fd, err := unix.Open("/", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /: %w", err)
	}
	for _, c := range strings.Split(strings.Trim(filepath.Clean(path), "/"), "/") {
		if c == "" {
			continue
		}
		next, err := unix.Openat(fd, c, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && mkdir {
			if err = unix.Mkdirat(fd, c, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, c, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("open %s without following links (at %q): %w", path, c, err)
		}
		fd = next
	}
	return os.NewFile(uintptr(fd), path), nil
}
