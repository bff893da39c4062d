package runfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/fspath"
	"github.com/scidex/scidex-jail/jail/option"
)

// Destinations are where a run delivers: the report (a file) and the
// outputs (the collect directory). Both are checked before anything runs, so that
// an analysis never runs only to have its results lost afterwards:
//
//   - the path resolves (links followed up to the last existing directory)
//     and is not under /proc or /sys;
//   - it is not inside any run directory of the tmp-root (this run's own,
//     another run's, a half-made .new one): those are removed;
//   - it is not an input (the root's data dirs, the inputs, the read-only
//     and read-write paths) nor inside or around one;
//   - its directory can be written (a file made and dropped there without
//     a name, O_TMPFILE, so nothing is ever left);
//   - the report is not a directory or a special file, and not inside the
//     collect directory (it would replace a collected file of its name);
//   - the collect directory is new or empty, unless CollectMerge; it is
//     not the tmp-root or above it.
//
// After the run, delivery opens these paths again without following any
// link, so a link planted meanwhile makes delivery fail instead of writing
// somewhere else.

// pseudoFS are file systems no delivery may go to, by statfs magic.
var pseudoFS = map[int64]string{
	unix.PROC_SUPER_MAGIC: "proc", unix.SYSFS_MAGIC: "sysfs", unix.CGROUP_SUPER_MAGIC: "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2", unix.DEBUGFS_MAGIC: "debugfs", unix.TRACEFS_MAGIC: "tracefs",
	unix.SECURITYFS_MAGIC: "securityfs", unix.BPF_FS_MAGIC: "bpf", unix.DEVPTS_SUPER_MAGIC: "devpts",
	unix.PSTOREFS_MAGIC: "pstore", unix.EFIVARFS_MAGIC: "efivarfs", 0x62656570: "configfs",
}

// Destinations are a run's destinations and what they are checked
// against: the report file and the collect directory as the caller gave
// them, the run's ID (for the messages' examples), the resolved tmp-root
// and the resolved inputs (data dirs that exist, the read-only and
// read-write paths); From names them in the messages as the caller gave
// them (the zero Origin: as flags).
type Destinations struct {
	Report, Collect string
	CollectMerge    bool
	ID              string
	TmpRoot         string
	Inputs          []string
	From            option.Origin
}

// CheckDestinations checks d by the rules above and returns the report
// and collect paths resolved ("" where none was given). Every error wraps
// ErrBadSpec and names the option as the caller gave it.
func CheckDestinations(d Destinations) (report, collect string, err error) {
	if d.Report != "" && d.Collect != "" {
		// First: a collect directory yet to be made is also the missing
		// directory of such a report.
		rd, rerr := NormalDest(d.report(), filepath.Dir(d.Report))
		cd, cerr := NormalDest(d.collect(), d.Collect)
		if rerr == nil && cerr == nil && fspath.Within(filepath.Join(rd, filepath.Base(d.Report)), cd) {
			return "", "", fmt.Errorf("%w: %s %s is inside %s %s: a collected output of that name would be replaced by the report; put the report beside the directory", ErrBadSpec, d.report(), d.Report, d.collect(), d.Collect)
		}
	}
	if d.Report != "" {
		if report, err = d.checkReport(); err != nil {
			return "", "", err
		}
	}
	if d.Collect != "" {
		if collect, err = d.checkCollect(); err != nil {
			return "", "", err
		}
	}
	return report, collect, nil
}

// checkCommon applies the rules shared by both destinations to n, the
// resolved path.
func checkCommon(name, given, n, tmp string, inputs []string) error {
	for _, t := range []string{"/proc", "/sys"} {
		if fspath.Within(n, t) {
			return fmt.Errorf("%w: %s %q is under %s: give a path on a real file system", ErrBadSpec, name, given, t)
		}
	}
	if rd, ok := insideRunDir(n, tmp); ok {
		return fmt.Errorf("%w: %s %q is inside the run directory %s, which is removed when its run ends (and is never a place to deliver to): give a path outside %s/%s*", ErrBadSpec, name, given, rd, tmp, DirPrefix)
	}
	for _, in := range inputs {
		if fspath.Within(n, in) || fspath.Within(in, n) {
			return fmt.Errorf("%w: %s %q is the same as, inside or around the input %s: give a path apart from the analysis' inputs", ErrBadSpec, name, given, in)
		}
	}
	return nil
}

// report and collect are the destinations' names as the caller gave them.
func (d Destinations) report() string  { return d.From.Name(option.Report) }
func (d Destinations) collect() string { return d.From.Name(option.Collect) }

func (d Destinations) checkReport() (string, error) {
	base := filepath.Base(d.Report)
	if strings.HasSuffix(d.Report, "/") || base == "." || base == ".." || base == "/" {
		return "", fmt.Errorf("%w: %s %q does not name a file: give a file path such as /srv/reports/%s.json", ErrBadSpec, d.report(), d.Report, d.ID)
	}
	// The directory is resolved, the last component is not: a link at the
	// report's name is replaced by the report, never followed (a link
	// planted in a shared directory must not make root write elsewhere).
	dir, err := NormalDest(d.report(), filepath.Dir(d.Report))
	if err != nil {
		return "", err
	}
	n := filepath.Join(dir, base)
	if err := checkCommon(d.report(), d.Report, n, d.TmpRoot, d.Inputs); err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: %s %q: its directory %s does not exist: create it or choose another path", ErrBadSpec, d.report(), d.Report, dir)
	}
	if fi, err := os.Lstat(n); err == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
		return "", fmt.Errorf("%w: %s %q exists and is %s, not a file: give the path of a file (it is replaced atomically)", ErrBadSpec, d.report(), d.Report, fspath.Kind(fi.Mode()))
	}
	// That the directory can be written is checked by making the
	// report's file when the run begins (OpenReport).
	return n, nil
}

func (d Destinations) checkCollect() (string, error) {
	if fi, err := os.Lstat(strings.TrimRight(d.Collect, "/")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return "", fmt.Errorf("%w: %s %q is a symbolic link: give the directory itself (a link in a shared directory could send the outputs elsewhere)", ErrBadSpec, d.collect(), d.Collect)
	}
	n, err := NormalDest(d.collect(), d.Collect)
	if err != nil {
		return "", err
	}
	if err := checkCommon(d.collect(), d.Collect, n, d.TmpRoot, d.Inputs); err != nil {
		return "", err
	}
	if fspath.Within(d.TmpRoot, n) {
		return "", fmt.Errorf("%w: %s %q is the tmp-root %s or above it: the outputs would land among run directories; give a directory of their own", ErrBadSpec, d.collect(), d.Collect, d.TmpRoot)
	}
	fi, err := os.Stat(n)
	switch {
	case err == nil && !fi.IsDir():
		return "", fmt.Errorf("%w: %s %q exists and is %s, not a directory: give a new or empty directory", ErrBadSpec, d.collect(), d.Collect, fspath.Kind(fi.Mode()))
	case err == nil:
		if !d.CollectMerge {
			es, err := os.ReadDir(n)
			if err != nil {
				return "", fmt.Errorf("%w: %s %q: %w", ErrBadSpec, d.collect(), d.Collect, err)
			}
			if len(es) > 0 {
				return "", fmt.Errorf("%w: %s %q is not empty (it holds %s, among %d entries): give a new or empty directory, or add %s to add to it (a file of the same name is then an error, never overwritten)",
					ErrBadSpec, d.collect(), d.Collect, es[0].Name(), len(es), d.From.Name(option.CollectMerge))
			}
		}
		if err := probeWritable(n); err != nil {
			return "", fmt.Errorf("%w: %s %q: %w; give a directory this jail can write", ErrBadSpec, d.collect(), d.Collect, err)
		}
	default:
		// Made at delivery: the deepest existing ancestor must be a
		// directory we can write.
		anc := filepath.Dir(n)
		for {
			if _, err := os.Lstat(anc); err == nil {
				break
			}
			anc = filepath.Dir(anc)
		}
		if fi, err := os.Stat(anc); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("%w: %s %q cannot be made: %s is not a directory; give a new or empty directory", ErrBadSpec, d.collect(), d.Collect, anc)
		}
		if err := probeWritable(anc); err != nil {
			return "", fmt.Errorf("%w: %s %q cannot be made in %s: %w; give a directory this jail can write", ErrBadSpec, d.collect(), d.Collect, anc, err)
		}
	}
	return n, nil
}

// probeWritable checks that a file can be made in dir: an unnamed one
// (O_TMPFILE) that vanishes on close, so the probe never leaves anything.
func probeWritable(dir string) error {
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(dfd)
	fd, err := tmpfileIn(dfd, dir)
	if fd >= 0 {
		unix.Close(fd)
	}
	return err
}

// tmpfileIn makes an unnamed file (O_TMPFILE) in the directory dfd (dir,
// for the messages), or returns -1 and no error where the file system has
// no O_TMPFILE and its mount flags and permissions let a file be made.
// Pseudo file systems are refused by type.
func tmpfileIn(dfd int, dir string) (int, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(dfd, &st); err != nil {
		return -1, fmt.Errorf("%s: %w", dir, err)
	}
	if name, ok := pseudoFS[int64(st.Type)]; ok {
		return -1, fmt.Errorf("%s is on %s, a pseudo file system", dir, name)
	}
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return fd, nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return -1, fmt.Errorf("%s cannot be written: %w", dir, err)
	}
	if st.Flags&unix.ST_RDONLY != 0 {
		return -1, fmt.Errorf("%s is on a read-only file system", dir)
	}
	if err := unix.Faccessat(dfd, ".", unix.W_OK|unix.X_OK, 0); err != nil {
		return -1, fmt.Errorf("%s cannot be written: %w", dir, err)
	}
	return -1, nil
}
