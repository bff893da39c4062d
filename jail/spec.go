package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// MaxIDLength bounds an analysis ID so that the run directory name stays well
// below NAME_MAX (255) and the ID fits in log lines and cgroup names.
const MaxIDLength = 128

// DirPrefix is the run directory's name before the ID.
const DirPrefix = "scidex-analysis-"

// Default values of a Spec's optional fields.
const (
	DefaultTimeout = 1800 * time.Second
	DefaultGrace   = 5 * time.Second
	DefaultTmpRoot = "/tmp"
	// DefaultHostUID is the host uid the target runs as when the jail runs
	// as root: the kernel's overflow uid "nobody", which owns nothing.
	DefaultHostUID = 65534
	// InsideUID is the target's uid (and gid) inside the user namespace:
	// non-zero, so nothing in the jail believes it is root.
	InsideUID = 1000
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// ErrBadSpec is wrapped by every validation error: the caller gave input that
// cannot be run. The command line maps it to exit status 125.
var ErrBadSpec = errors.New("invalid run specification")

// Spec is one run, fully resolved: everything the supervisor and the init
// need, as plain values. Build it, Validate it, hand it to Run.
type Spec struct {
	ID      string        // analysis ID: letters, digits, '.', '_', '-'
	Command []string      // argv of the target; Command[0] looked up in the jail's PATH
	Env     []string      // extra K=V for the target, on top of the fixed base
	TmpRoot string        // absolute directory holding the run directory
	Timeout time.Duration // wall-clock budget; 0 means none
	Grace   time.Duration // SIGTERM to SIGKILL on timeout or cancel
	Keep    bool          // keep the run directory afterwards
	Collect string        // copy the outputs here before removal; "" = no copy

	HostUID int // host uid/gid of the target when the jail runs as root
	HostGID int
}

// Validate checks the spec and returns an error wrapping ErrBadSpec that says
// what is wrong and how to fix it. It touches nothing on disk but Stat.
func (s *Spec) Validate() error {
	if err := ValidateID(s.ID); err != nil {
		return err
	}
	if len(s.Command) == 0 || s.Command[0] == "" {
		return fmt.Errorf("%w: no command given: put the command after '--', e.g. scidex-jail run --id %s -- python3 script.py", ErrBadSpec, s.ID)
	}
	if s.TmpRoot == "" || !filepath.IsAbs(s.TmpRoot) {
		return fmt.Errorf("%w: --tmp-root %q must be an absolute path to an existing directory", ErrBadSpec, s.TmpRoot)
	}
	if filepath.Clean(s.TmpRoot) != s.TmpRoot {
		return fmt.Errorf("%w: --tmp-root %q is not a clean path; use %q", ErrBadSpec, s.TmpRoot, filepath.Clean(s.TmpRoot))
	}
	if err := checkDir(s.TmpRoot); err != nil {
		return fmt.Errorf("%w: --tmp-root: %w", ErrBadSpec, err)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("%w: --timeout %s is negative; give a duration such as 90s or 30m", ErrBadSpec, s.Timeout)
	}
	if s.Grace < 0 {
		return fmt.Errorf("%w: --grace %s is negative; give a duration such as 5s", ErrBadSpec, s.Grace)
	}
	for _, kv := range s.Env {
		if err := validateEnv(kv); err != nil {
			return err
		}
	}
	if s.HostUID <= 0 || s.HostGID <= 0 {
		return fmt.Errorf("%w: the analysis' host uid/gid %d:%d must be non-zero, so it never runs as host root", ErrBadSpec, s.HostUID, s.HostGID)
	}
	return nil
}

// ValidateID checks an analysis ID.
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: --id is empty; give the analysis ID, e.g. --id SDA-2026-0001", ErrBadSpec)
	case len(id) > MaxIDLength:
		return fmt.Errorf("%w: --id is %d characters long; at most %d are allowed", ErrBadSpec, len(id), MaxIDLength)
	case !idPattern.MatchString(id):
		return fmt.Errorf("%w: --id %q may hold only letters, digits, '.', '_' and '-'", ErrBadSpec, id)
	case strings.Contains(id, ".."), id == ".":
		return fmt.Errorf("%w: --id %q must not contain '..' or be '.'", ErrBadSpec, id)
	}
	return nil
}

func validateEnv(kv string) error {
	k, _, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("%w: --env %q is not of the form NAME=VALUE", ErrBadSpec, kv)
	}
	if strings.ContainsAny(k, " \t\n\x00") || strings.Contains(kv, "\x00") {
		return fmt.Errorf("%w: --env %q: the name may not contain blanks or NUL", ErrBadSpec, kv)
	}
	return nil
}

// RunDir is the run directory's absolute path.
func (s *Spec) RunDir() string {
	return filepath.Join(s.TmpRoot, DirPrefix+s.ID)
}

// TargetEnv is the target's whole environment: a fixed base that does not
// depend on the host, then the caller's --env entries (which win).
func (s *Spec) TargetEnv() []string {
	dir := s.RunDir()
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"HOME=" + dir,
		"TMPDIR=" + dir,
		"SCIDEX_ANALYSIS_ID=" + s.ID,
	}
	return mergeEnv(env, s.Env)
}

// mergeEnv appends extra to base; a name in extra replaces the same name in base.
func mergeEnv(base, extra []string) []string {
	idx := make(map[string]int, len(base))
	out := append([]string(nil), base...)
	for i, kv := range out {
		k, _, _ := strings.Cut(kv, "=")
		idx[k] = i
	}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

func checkDir(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s does not exist or cannot be reached: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", path)
	}
	return nil
}
