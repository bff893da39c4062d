package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Destinations are where a run delivers: the report (--report FILE) and the
// outputs (--collect DIR). Both are checked before anything runs, so that
// an analysis never runs only to have its results lost afterwards:
//
//   - the path resolves (links followed up to the last existing directory)
//     and is not under /proc or /sys;
//   - it is not inside any run directory of the tmp-root (this run's own,
//     another run's, a half-made .new one): those are removed;
//   - it is not an input (--root's data dirs, --input, --ro, --rw) nor
//     inside or around one;
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

// checkDestinations validates and normalises s.Report and s.Collect.
func (s *Spec) checkDestinations() error {
	tmp := s.resolvedTmpRoot()
	inputs := s.inputPaths()
	if s.Report != "" && s.Collect != "" {
		// First: a collect directory yet to be made is also the missing
		// directory of such a report.
		rd, rerr := normalDest("--report", filepath.Dir(s.Report))
		cd, cerr := normalDest("--collect", s.Collect)
		if rerr == nil && cerr == nil && within(filepath.Join(rd, filepath.Base(s.Report)), cd) {
			return fmt.Errorf("%w: --report %s is inside --collect %s: a collected output of that name would be replaced by the report; put the report beside the directory", ErrBadSpec, s.Report, s.Collect)
		}
	}
	if s.Report != "" {
		n, err := s.checkReport(tmp, inputs)
		if err != nil {
			return err
		}
		s.Report = n
	}
	if s.Collect != "" {
		n, err := s.checkCollect(tmp, inputs)
		if err != nil {
			return err
		}
		s.Collect = n
	}
	return nil
}

// inputPaths are the resolved host paths the analysis reads or writes
// besides its run directory: data dirs that exist, --ro/--input, --rw.
func (s *Spec) inputPaths() []string {
	var out []string
	for _, d := range s.DataDirs {
		if s.Root == "" {
			break
		}
		if n, err := filepath.EvalSymlinks(filepath.Join(s.Root, d)); err == nil {
			out = append(out, n)
		}
	}
	out = append(out, s.ReadOnly...)
	return append(out, s.ReadWrite...)
}

// checkCommon applies the rules shared by both destinations to n, the
// resolved path.
func checkCommon(flag, given, n, tmp string, inputs []string) error {
	for _, t := range []string{"/proc", "/sys"} {
		if within(n, t) {
			return fmt.Errorf("%w: %s %q is under %s: give a path on a real file system", ErrBadSpec, flag, given, t)
		}
	}
	if rd, ok := insideRunDir(n, tmp); ok {
		return fmt.Errorf("%w: %s %q is inside the run directory %s, which is removed when its run ends (and is never a place to deliver to): give a path outside %s/%s*", ErrBadSpec, flag, given, rd, tmp, DirPrefix)
	}
	for _, in := range inputs {
		if within(n, in) || within(in, n) {
			return fmt.Errorf("%w: %s %q is the same as, inside or around the input %s: give a path apart from the analysis' inputs", ErrBadSpec, flag, given, in)
		}
	}
	return nil
}

func (s *Spec) checkReport(tmp string, inputs []string) (string, error) {
	base := filepath.Base(s.Report)
	if strings.HasSuffix(s.Report, "/") || base == "." || base == ".." || base == "/" {
		return "", fmt.Errorf("%w: --report %q does not name a file: give a file path such as /srv/reports/%s.json", ErrBadSpec, s.Report, s.ID)
	}
	// The directory is resolved, the last component is not: a link at the
	// report's name is replaced by the report, never followed (a link
	// planted in a shared directory must not make root write elsewhere).
	dir, err := normalDest("--report", filepath.Dir(s.Report))
	if err != nil {
		return "", err
	}
	n := filepath.Join(dir, base)
	if err := checkCommon("--report", s.Report, n, tmp, inputs); err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: --report %q: its directory %s does not exist: create it or choose another path", ErrBadSpec, s.Report, dir)
	}
	if fi, err := os.Lstat(n); err == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
		return "", fmt.Errorf("%w: --report %q exists and is %s, not a file: give the path of a file (it is replaced atomically)", ErrBadSpec, s.Report, modeKind(fi.Mode()))
	}
	if err := probeWritable(dir); err != nil {
		return "", fmt.Errorf("%w: --report %q: %w; give a path in a directory this jail can write", ErrBadSpec, s.Report, err)
	}
	return n, nil
}

func (s *Spec) checkCollect(tmp string, inputs []string) (string, error) {
	if fi, err := os.Lstat(strings.TrimRight(s.Collect, "/")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return "", fmt.Errorf("%w: --collect %q is a symbolic link: give the directory itself (a link in a shared directory could send the outputs elsewhere)", ErrBadSpec, s.Collect)
	}
	n, err := normalDest("--collect", s.Collect)
	if err != nil {
		return "", err
	}
	if err := checkCommon("--collect", s.Collect, n, tmp, inputs); err != nil {
		return "", err
	}
	if within(tmp, n) {
		return "", fmt.Errorf("%w: --collect %q is the tmp-root %s or above it: the outputs would land among run directories; give a directory of their own", ErrBadSpec, s.Collect, tmp)
	}
	fi, err := os.Stat(n)
	switch {
	case err == nil && !fi.IsDir():
		return "", fmt.Errorf("%w: --collect %q exists and is %s, not a directory: give a new or empty directory", ErrBadSpec, s.Collect, modeKind(fi.Mode()))
	case err == nil:
		if !s.CollectMerge {
			es, err := os.ReadDir(n)
			if err != nil {
				return "", fmt.Errorf("%w: --collect %q: %w", ErrBadSpec, s.Collect, err)
			}
			if len(es) > 0 {
				return "", fmt.Errorf("%w: --collect %q is not empty (it holds %s, among %d entries): give a new or empty directory, or add --collect-merge to add to it (a file of the same name is then an error, never overwritten)",
					ErrBadSpec, s.Collect, es[0].Name(), len(es))
			}
		}
		if err := probeWritable(n); err != nil {
			return "", fmt.Errorf("%w: --collect %q: %w; give a directory this jail can write", ErrBadSpec, s.Collect, err)
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
			return "", fmt.Errorf("%w: --collect %q cannot be made: %s is not a directory; give a new or empty directory", ErrBadSpec, s.Collect, anc)
		}
		if err := probeWritable(anc); err != nil {
			return "", fmt.Errorf("%w: --collect %q cannot be made in %s: %w; give a directory this jail can write", ErrBadSpec, s.Collect, anc, err)
		}
	}
	return n, nil
}

// probeWritable checks that a file can be made in dir: an unnamed one
// (O_TMPFILE) that vanishes on close, so the probe never leaves anything.
// File systems without O_TMPFILE are checked by their mount flags and
// permissions instead; pseudo file systems are refused by type.
func probeWritable(dir string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if name, ok := pseudoFS[int64(st.Type)]; ok {
		return fmt.Errorf("%s is on %s, a pseudo file system", dir, name)
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("%s cannot be written: %w", dir, err)
	}
	if st.Flags&unix.ST_RDONLY != 0 {
		return fmt.Errorf("%s is on a read-only file system", dir)
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("%s cannot be written: %w", dir, err)
	}
	return nil
}

// modeKind names a file type for a message.
func modeKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}
