package runfiles

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Every name the jail gives a thing on disk, and every name by which a
// sweep knows a dead jail's leftover, is here:
//
//	<tmp-root>/scidex-analysis-<ID>              a run directory (DirPrefix)
//	<tmp-root>/.scidex-analysis-<ID>.<hex>.new   one being made (newDirName)
//	<dir>/.<name>.scidex-<hex>.tmp               a report being written (tempReportName)
//	scidex-<ID>-<hex>                            a run's cgroup leaf (LeafName)
//	trusted.scidex-jail.run                      a live run directory's mark (runDirMark)
//	trusted.scidex-jail.swept-<what>             a tmp-root's sweep stamp (sweepStamp)
//
// <hex> is 12 random lower-case hex digits (randomSuffix).

// DirPrefix is the run directory's name before the ID.
const DirPrefix = "scidex-analysis-"

// DirName is the name of the run directory of the run id.
func DirName(id string) string { return DirPrefix + id }

// LeafPrefix starts the name of every run's cgroup leaf.
const LeafPrefix = "scidex-"

// StaleLeafAge is how old an unlocked leaf must be before a run removes it
// as a dead run's: a live jail locks its leaf within microseconds of
// making it; this margin covers a machine under load.
const StaleLeafAge = 2 * time.Second

// MaxIDLength bounds an analysis ID so that the run directory name stays
// well below NAME_MAX (255) and the ID fits in log lines and cgroup names.
const MaxIDLength = 128

// ErrBadSpec is wrapped by every error that refuses the caller's input (the
// command line maps it to exit status 125); jail.ErrBadSpec is this value.
var ErrBadSpec = errors.New("invalid run specification")

// ErrBusy is wrapped when another live run holds the same analysis ID.
var ErrBusy = errors.New("analysis ID in use")

// NameChars is the one character rule for names the jail takes from users
// (analysis IDs, profile names): ASCII letters (upper case only if upper),
// digits, '.', '_' and '-'. Safe in paths, cgroup names and hostnames.
func NameChars(s string, upper bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || upper && c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckID checks an analysis ID, which names the run directory and the
// cgroup leaf: the error says what is wrong with it, starting with the
// ID, for the caller to put the name the user gave it by (--id, request
// field id) in front.
func CheckID(id string) error {
	switch {
	case id == "":
		return errors.New("is empty; give the analysis ID, e.g. SDA-2026-0001")
	case len(id) > MaxIDLength:
		return fmt.Errorf("is %d characters long; at most %d are allowed", len(id), MaxIDLength)
	case !NameChars(id, true):
		return fmt.Errorf("%q may hold only letters, digits, '.', '_' and '-'", id)
	case strings.Contains(id, ".."), id == ".":
		return fmt.Errorf("%q must not contain '..' or be '.'", id)
	}
	return nil
}

// LeafName is the planned name of the run id's cgroup leaf; Unique makes
// it the name of a new one.
func LeafName(id string) string { return LeafPrefix + id }

// Unique is a new name made from name and a random suffix, so that a
// leftover of a dead run of the same ID never stands in the way.
func Unique(name string) string { return name + "-" + randomSuffix() }

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newDirName(name string) string { return "." + name + "." + randomSuffix() + ".new" }

func tempReportName(base string) string {
	return "." + base + ".scidex-" + randomSuffix() + ".tmp"
}

// The leftovers' names, compiled when a sweep first needs them (a sweep
// runs at most once a SweepInterval), not at every process's start.
var (
	tempReportRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\..+\.scidex-[0-9a-f]{12}\.tmp$`)
	})
	newDirRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\.` + regexp.QuoteMeta(DirPrefix) + `(.+)\.[0-9a-f]{12}\.new$`)
	})
)

// isTempReportName reports whether name is a report being written. The
// writer holds an flock on it for as long as it lives, so an unlocked one
// is a leftover of a writer that died (sweep.go).
func isTempReportName(name string) bool { return tempReportRe().MatchString(name) }

// newDirID returns the ID of a run directory being made, and whether name
// is one of a valid ID.
func newDirID(name string) (string, bool) {
	m := newDirRe().FindStringSubmatch(name)
	if m == nil || CheckID(m[1]) != nil {
		return "", false
	}
	return m[1], true
}

func isNewDir(name string) bool {
	_, ok := newDirID(name)
	return ok
}

// sweepStamp is the extended attribute on a tmp-root that holds when a run
// last swept the leftovers of kind what, in Unix nanoseconds. As root a
// trusted.* one, which only root can set or remove; rootless a user.* one.
func sweepStamp(what string) string {
	if os.Geteuid() == 0 {
		return "trusted.scidex-jail.swept-" + what
	}
	return "user.scidex-jail.swept-" + what
}

// runDirMark is the extended attribute a live run's directory carries. As
// root it is a trusted.* attribute, which only a process with CAP_SYS_ADMIN
// in the host's user namespace can set or remove, so an analysis can
// neither forge nor drop it; rootless, a user.* one.
func runDirMark() string {
	if os.Geteuid() == 0 {
		return "trusted.scidex-jail.run"
	}
	return "user.scidex-jail.run"
}

// markRunDir marks a new run directory as a live run's.
func markRunDir(fd int) error {
	return unix.Fsetxattr(fd, runDirMark(), []byte("1"), 0)
}

func hasMark(fd int) bool {
	var b [8]byte
	_, err := unix.Fgetxattr(fd, runDirMark(), b[:])
	return err == nil
}
