package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scidex/scidex-jail/internal/fspath"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// Defaults of the command line's own flags (a profile supplies the
// limits, timeout and grace).
const (
	DefaultTmpRoot = "/tmp"
	// InsideUID is the target's uid (and gid) inside the user namespace:
	// non-zero, so nothing in the jail believes it is root.
	InsideUID = protocol.InsideUID
)

// ErrBadSpec is wrapped by every validation error: the caller gave input that
// cannot be run. The command line maps it to exit status 125.
var ErrBadSpec = runfiles.ErrBadSpec

// Spec is one run as the caller gives it: everything the supervisor and the init
// need, as plain values. Build it and hand it to supervise.Run, which validates it
// (Validate) and runs the resolved copy.
type Spec struct {
	ID      string   // analysis ID: letters, digits, '.', '_', '-'
	Command []string // argv of the target; Command[0] looked up in the jail's PATH
	Env     []string // extra K=V for the target, on top of the fixed base
	TmpRoot string   // absolute directory holding the run directory
	Keep    bool     // keep the run directory afterwards
	Collect string   // copy the outputs here before removal; "" = no copy
	// CollectMerge lets Collect be a directory that is not empty; a file
	// of the same name there is still never overwritten.
	CollectMerge bool
	// KeepScratch makes the analysis' scratch (HOME, TMPDIR, caches) the
	// run directory's .scidex-scratch/, so that it is listed, collected
	// and kept with the outputs: for debugging. By default the scratch is
	// never an output (scratch.go).
	KeepScratch bool
	// report.Report is where supervise.Run writes the JSON report (atomically); "" = none.
	// Validate resolves it and Collect in its copy (runfiles.CheckDestinations).
	Report string

	// HostUID and HostGID are the target's host uid and gid when the jail
	// runs as root, fixed by the caller; both 0 (the default): each run
	// leases an id of its own from UIDRange (uids.go). Rootless runs are
	// the caller's uid whatever these say.
	HostUID int
	HostGID int
	// UIDRange is where leased ids come from; the zero value is
	// uidlease.Default.
	UIDRange uidlease.Range

	Profile string // name of the profile the values came from, for the report

	// Filesystem. Root is the platform's checkout; DataDirs (relative to
	// it, e.g. data and docs) are bound read-only when they exist.
	// ReadOnly and ReadWrite are further absolute host paths, which must
	// exist.
	Root      string
	DataDirs  []string
	ReadOnly  []string
	ReadWrite []string

	// OutputIgnore are the names never listed as outputs, at any depth
	// (runfiles.DefaultIgnore: the caches tools keep in the working
	// directory); the profile's output_ignore.
	OutputIgnore []string

	// Limits are the run's limits by row of jail/limits' table: timeout
	// and grace, memory, swap, cpus and pids (the cgroup leaf's), disk
	// (the run directory's tmpfs; 0 = none, bound from the host), shm and
	// the output budgets (output_budget.go). A limit switched off is 0.
	Limits limits.Values

	// Network.
	Net      netmode.Name // a row of jail/netmode's table; "" is its Default
	AllowTCP []uint16     // outbound TCP ports, for a mode that takes them (netmode.Mode.TCPPorts)
	DBPorts  []uint16     // never allowed, whatever AllowTCP says
	// AllowHosts and AllowRanges are what a mode that takes hosts
	// (netmode.Mode.Hosts: egress) lets the analysis reach: host entries
	// and CIDR ranges, as jail/egress's Parse reads them.
	AllowHosts  []string
	AllowRanges []string

	// From says where the values came from: the profile, and the rows
	// (limits and options) given over it on the command line, in a
	// request or as Python's keywords, so that every message names what
	// the user wrote, in the words of where they wrote it. The zero
	// value names flags throughout (a Spec a program builds).
	From option.Origin

	CgroupParent string // delegated parent; "" = the jail's own cgroup

	// OptIns are the protections the caller gave up by name: degraded
	// (run with what the kernel offers of Landlock, the profile's
	// allow_degraded) or disabled altogether (landlock, seccomp, cgroup:
	// for benchmarks and debugging), parsed once where they were read
	// (promise.ParseOptIns). A promise may hold with fewer layers than
	// required only when each missing layer was given up by one of these;
	// the report records them.
	OptIns promise.OptIns

	// Started is when the jail's process started (supervise.ProcessStart), or a
	// server's request came: the report's first phase, startup, runs from
	// it to supervise.Run (to the request's acceptance when Options.Accepted is
	// given; the wait after it is the queued phase). Zero: Run's own
	// start, and no startup phase.
	Started time.Time

	// RequireLayers raises how many layers a promise needs (the profile's
	// require_layers); promises not named need promise.DefaultLayers.
	RequireLayers map[promise.Promise]int
}

func (s *Spec) disabled(p promise.Protection) bool { return slices.Contains(s.OptIns.Disabled(), p) }

// check is Validate's work on the copy it returns: it replaces host paths
// by their resolved form (inputs.go, runfiles.CheckDestinations) and defaults the
// network mode. It returns the tmp-root with its links resolved
// (resolvedTmpRoot), resolved once for all the checks that compare paths
// with it and for the Resolved: each resolution is a walk of lstats (three
// per request's validation before), and one is what every check sees.
func (s *Spec) check() (realTmp string, err error) {
	if err := runfiles.CheckID(s.ID); err != nil {
		return "", fmt.Errorf("%w: %s %w", ErrBadSpec, s.From.Name(option.ID), err)
	}
	if len(s.Command) == 0 || s.Command[0] == "" {
		return "", fmt.Errorf("%w: no command given: give it as %s, e.g. python3 script.py", ErrBadSpec, s.From.Name(option.Command))
	}
	if err := s.checkTmpRoot(); err != nil {
		return "", err
	}
	for i, kv := range s.Env {
		if err := ValidateEnv(kv); err != nil {
			return "", fmt.Errorf("%w: %s %w", ErrBadSpec, s.From.NameAt(option.Env, i), err)
		}
	}
	realTmp = s.resolvedTmpRoot()
	if err := s.validateFS(realTmp); err != nil {
		return "", err
	}
	if err := s.validateScratch(); err != nil {
		return "", err
	}
	if err := s.validateNet(); err != nil {
		return "", err
	}
	if err := runfiles.CheckIgnore(s.OutputIgnore); err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrBadSpec, s.From.Name(option.OutputIgnore), err)
	}
	if err := s.validateLimits(); err != nil { // limits.go
		return "", err
	}
	for _, o := range s.OptIns {
		if err := o.Check(); err != nil {
			return "", fmt.Errorf("%w: %s %w", ErrBadSpec, s.From.Name(optInRow(o)), err)
		}
	}
	if err := promise.ValidateRequireLayers(s.RequireLayers, netmode.Networks()); err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrBadSpec, s.From.Name(option.RequireLayers), err)
	}
	if err := s.validateIDs(); err != nil { // uids.go
		return "", err
	}
	return realTmp, s.checkDestinations(realTmp)
}

// optInRow is the row an opt-in is given by.
func optInRow(o promise.OptIn) option.Row {
	if o.Kind == promise.OptInDegrade {
		return option.AllowDegraded
	}
	return option.UnsafeDisable
}

// checkTmpRoot checks the tmp-root: absolute, clean, an existing
// directory that a run can use (container.go).
func (s *Spec) checkTmpRoot() error {
	name := s.From.Name(option.TmpRoot)
	if s.TmpRoot == "" || !filepath.IsAbs(s.TmpRoot) {
		return fmt.Errorf("%w: %s %q must be an absolute path to an existing directory", ErrBadSpec, name, s.TmpRoot)
	}
	if filepath.Clean(s.TmpRoot) != s.TmpRoot {
		return fmt.Errorf("%w: %s %q is not a clean path; use %q", ErrBadSpec, name, s.TmpRoot, filepath.Clean(s.TmpRoot))
	}
	if err := checkDir(s.TmpRoot); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadSpec, name, err)
	}
	return s.validateContainer()
}

// ValidateEnv checks one NAME=VALUE entry of the target's environment;
// the error starts with the entry, for the caller to put the name the
// user wrote (--env, profiles.z.env) in front of it.
func ValidateEnv(kv string) error {
	k, _, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not of the form NAME=VALUE", kv)
	}
	if strings.ContainsAny(k, " \t\n\x00") || strings.Contains(kv, "\x00") {
		return fmt.Errorf("%q: the name may not contain blanks or NUL", kv)
	}
	return nil
}

// RunDir is the run directory's absolute path.
func (s *Spec) RunDir() string {
	return filepath.Join(s.TmpRoot, runfiles.DirName(s.ID))
}

// targetEnv is the target's whole environment: a fixed base that does not
// depend on the host, HOME, TMPDIR and the caches in the scratch
// (scratchEnv), the data dirs' locations (dataEnv), then the caller's
// env entries (which win), then the BLAS thread defaults.
func (s *Spec) targetEnv(dataEnv []string) []string {
	// One list, made with room for what is appended to it (every
	// request plans it: it was six lists and a map made for each).
	env := make([]string, 0, 3+len(scratchEnv)+len(dataEnv)+len(s.Env)+len(blasVars))
	env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "SCIDEX_ANALYSIS_ID="+s.ID)
	env = append(env, keptScratchEnv()...)
	env = append(env, dataEnv...)
	return blasThreads(mergeEnv(env, s.Env), s.Limits.CPUs(limits.CPUQuota))
}

// mergeEnv appends extra to base; a name in extra replaces the same name
// in base. base is the caller's own, and may be returned.
func mergeEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
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

func (s *Spec) validateFS(realTmp string) error {
	for i, d := range s.DataDirs {
		if filepath.IsAbs(d) || strings.Contains(d, "..") {
			return fmt.Errorf("%w: %s %q must be a plain path relative to the root (%s)", ErrBadSpec, s.From.NameAt(option.DataDirs, i), d, s.From.Name(option.Root))
		}
	}
	if err := s.normaliseInputs(); err != nil {
		return err
	}
	runDir := filepath.Join(realTmp, runfiles.DirName(s.ID))
	for _, l := range s.hostPaths() {
		for i, p := range l.paths {
			if fspath.Within(runDir, p) {
				return fmt.Errorf("%w: %s %q would contain the run directory %s: give a path beside it", ErrBadSpec, s.From.NameAt(l.row, i), p, runDir)
			}
		}
	}
	return nil
}

// pathList is a list row of host paths and its entries.
type pathList struct {
	row   option.Row
	paths []string
}

// hostPaths are the host paths bound into the jail besides the root's:
// the read-only ones (the profile's, the inputs, those given) and the
// read-write ones.
func (s *Spec) hostPaths() []pathList {
	return []pathList{{option.ReadOnly, s.ReadOnly}, {option.ReadWrite, s.ReadWrite}}
}

// validateNet checks the network mode against jail/netmode's table (a name
// it has; allowed TCP ports only for a mode that takes them) and fills in
// the default mode. profile.Check asks the same rule (netmode.Lookup,
// Mode.CheckPorts) in the profile's words.
func (s *Spec) validateNet() error {
	if s.Net == "" {
		s.Net = netmode.Default
	}
	mode, err := netmode.Lookup(s.Net)
	if err != nil {
		return fmt.Errorf("%w: %s %w", ErrBadSpec, s.From.Name(option.Net), err)
	}
	tcp := s.From.Name(option.AllowTCP)
	if pe := mode.CheckPorts(s.AllowTCP); pe != nil {
		// The fix in the words the user gives values in: --net host.
		return fmt.Errorf("%w: %s %s", ErrBadSpec, tcp, pe.Needs(s.From.Join(option.Net)))
	}
	if err := s.validateHosts(mode); err != nil { // hosts.go
		return err
	}
	for _, p := range s.AllowTCP {
		if p == 0 {
			return fmt.Errorf("%w: %s: port 0 is not a port", ErrBadSpec, tcp)
		}
		if slices.Contains(s.DBPorts, p) {
			return fmt.Errorf("%w: %s %d: that is a database port (PostgreSQL listens on 5432) and can never be opened to an analysis", ErrBadSpec, tcp, p)
		}
	}
	return nil
}
