package jail

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ExitDeliveryFailed is scidex-jail's exit status when the analysis ran
// but its outputs or its report could not be delivered (StatusDeliveryFailed).
// Chosen beside 125-127 (the jail's own failures, as in env(1)) and below
// 128 (signals), where no common tool puts a meaning.
const ExitDeliveryFailed = 122

// tempReportRe matches the temporary name a report has between being
// written and being renamed into place: .<name>.scidex-<12 hex>.tmp. The
// writer holds an flock on it for as long as it lives, so an unlocked one
// is a leftover of a writer that died (sweep.go).
// Matched by hand, not with a regexp: a bounded repetition compiled at
// package init costs every process of every run (the init too) about half
// a millisecond.
func isTempReportName(name string) bool {
	rest, ok := strings.CutSuffix(name, ".tmp")
	if !ok || !strings.HasPrefix(rest, ".") || strings.ContainsRune(name, '\n') {
		return false
	}
	base, suffix, ok := cutLast(rest[1:], ".scidex-")
	return ok && base != "" && isHex12(suffix)
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// isHex12 reports whether s is 12 lower-case hex digits (randomSuffix).
func isHex12(s string) bool {
	if len(s) != 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func tempReportName(base string) string {
	return "." + base + ".scidex-" + randomSuffix() + ".tmp"
}

func (r *Report) encode() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return append(b, '\n'), nil
}

func writeReport(path string, b []byte, stamp func(*os.File) error) error {
	if err := writeAtomic(path, b, stamp); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}

// writeAtomic writes b to a new file at path, whole or not at all: readers
// see the old file or the whole new one, never a part. The new one is
// written into an unnamed file (O_TMPFILE) that vanishes if the writer
// dies, locked, given a temporary name only once complete, and renamed over
// path. Where the file system has no O_TMPFILE, it is written under the
// temporary name, locked from the moment it is made sure to be ours. On
// every path this function returns from, no temporary file is left; after
// a SIGKILL at the wrong moment, at most one, unlocked, which the next run
// or `gc` removes. stamp, when set, runs once b is written, before the
// file gets its name: it may write over what it knows the place of (the
// report's own phase).
//
// The directory is opened without following links: path must be resolved
// (Spec.Validate does that for Spec.Report).
func writeAtomic(path string, b []byte, stamp func(*os.File) error) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	d, err := openDirPath(dir, false)
	if err != nil {
		return err
	}
	defer d.Close()
	dfd := int(d.Fd())
	f, tmp, err := tempFileIn(dfd, base)
	if err != nil {
		return err
	}
	defer f.Close() // drops the lock, last
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
	if stamp != nil {
		if err := stamp(f); err != nil {
			return fail(err)
		}
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
// the cause goes to delivery_errors, and scidex-jail exits 122.
func (r *Report) deliveryFailed(cause string) {
	if r.Status != StatusDeliveryFailed && r.AnalysisStatus == "" {
		// An output_limit run keeps the analysis' own status here; its
		// own is in the notes.
		r.AnalysisStatus = r.Status
		code := r.ExitCode
		r.AnalysisExitCode = &code
	}
	r.Status = StatusDeliveryFailed
	r.ExitCode = ExitDeliveryFailed
	r.DeliveryErrors = append(r.DeliveryErrors, cause)
	r.CompletionNotes = deliveryNotes(r)
}

// deliveryNotes puts the failed delivery in front of the analysis' own
// completion notes.
func deliveryNotes(r *Report) string {
	if r.ownNotes == "" {
		r.ownNotes = r.CompletionNotes
	}
	return fmt.Sprintf("The results were not delivered (%s). %s", strings.Join(r.DeliveryErrors, "; "), r.ownNotes)
}

// deliverReport writes r to path, if one was asked for, and ends the
// report phase on pt. A failure makes the run a delivery failure (the
// report then reaches the caller only on stderr, see the command line).
//
// The report's last phase, "report", covers its own encoding and its write
// to the file: the phase is encoded as reportMark, and its true length
// written over the mark, in the bytes and in the file, once the bytes are
// in the file and before it gets its name.
func deliverReport(r *Report, pt *phaseTimer, path string) {
	if path == "" {
		pt.lap("report")
		r.Phases = append(r.Phases, pt.phases[len(pt.phases)-1])
		return
	}
	b, at, err := encodeMarked(r, pt)
	if err == nil {
		err = writeReport(path, b, func(f *os.File) error {
			_, err := f.WriteAt(stampReport(r, pt, b, at), int64(at))
			return err
		})
	}
	if err != nil {
		r.deliveryFailed(err.Error())
	}
}

// reportMark stands for the report phase's length while the report is
// encoded: a number no phase reaches, as wide as any length can be.
const reportMark = 999_999_999_999

// encodeMarked encodes r with its last phase, "report", as reportMark, and
// returns where the mark's digits are in the encoding. `"us": ` only ever
// starts a phase's length (a quote inside a string is escaped), and the
// report phase is the last.
func encodeMarked(r *Report, pt *phaseTimer) (b []byte, at int, err error) {
	const key = `"us": `
	r.Phases = append(r.Phases, Phase{Name: "report", Where: "supervisor", Micros: reportMark})
	b, err = r.encode()
	if err != nil {
		stampReport(r, pt, nil, 0)
		return nil, 0, err
	}
	i := bytes.LastIndex(b, []byte(key+strconv.FormatInt(reportMark, 10)))
	if i < 0 {
		stampReport(r, pt, nil, 0)
		return nil, 0, fmt.Errorf("encode report: bug: the report phase's mark is not in the encoding")
	}
	return b, i + len(key), nil
}

// stampReport ends the report phase: its length (since pt's last phase)
// goes into r and over the mark's digits at b[at:], padded with the spaces
// JSON allows after a number; it returns those digits.
func stampReport(r *Report, pt *phaseTimer, b []byte, at int) []byte {
	pt.lap("report")
	r.Phases[len(r.Phases)-1] = pt.phases[len(pt.phases)-1]
	if b == nil {
		return nil
	}
	digits := b[at : at+len(strconv.FormatInt(reportMark, 10))]
	n := copy(digits, strconv.FormatInt(r.Phases[len(r.Phases)-1].Micros, 10))
	for j := n; j < len(digits); j++ {
		digits[j] = ' '
	}
	return digits
}
