package profile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/fspath"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// DefaultProfilesFile is read when it exists and no --config is given.
const DefaultProfilesFile = "/etc/scidex-jail/profiles.json"

// Profile is a named set of limits and permissions. Every field is set in
// the built-ins; a profiles file overrides field by field.
type Profile struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Limits are the profile's limits by row of jail/limits' table, each
	// the profiles file's field the row names (memory, cpus, ...).
	Limits limits.Values `json:"-"`
	Permissions
}

// Permissions are a profile's fields that are not limits: its network,
// the paths it reads and writes, its environment and its opt-ins.
type Permissions struct {
	Net           netmode.Name            `json:"net"`
	AllowTCP      []uint16                `json:"allow_tcp"`
	AllowHosts    []string                `json:"allow_hosts"`  // egress: host entries (jail/egress's Parse)
	AllowRanges   []string                `json:"allow_ranges"` // egress: CIDR ranges
	DBPorts       []uint16                `json:"db_ports"`
	DataDirs      []string                `json:"data_dirs"`
	ReadOnly      []string                `json:"read_only"`
	ReadWrite     []string                `json:"read_write"`
	Env           []string                `json:"env"`
	AllowDegraded []promise.Protection    `json:"allow_degraded"` // checked once, when the profile is read (Check)
	RequireInput  bool                    `json:"require_input"`
	RequireLayers map[promise.Promise]int `json:"require_layers"` // more layers than the default for a promise (EvaluatePromises)
	// OutputIgnore are names never listed as outputs, at any depth
	// (runfiles.DefaultIgnore in the built-ins). In a profiles file a
	// list replaces the base's, {"extend": [...]} adds to it.
	OutputIgnore []string `json:"output_ignore"`
}

// postgresPort is PostgreSQL's: no profile can open it.
const postgresPort = 5432

// Builtins are the profiles every installation has. The reasoning for each
// value is in the README's profile table.
func Builtins() map[string]Profile {
	base := Profile{
		Limits: limits.Of(L{limits.Timeout: 1800 * time.Second, limits.Grace: 10 * time.Second,
			limits.Memory: 2 << 30, limits.CPUQuota: 2, limits.PIDs: 512, limits.Disk: 1 << 30, limits.Shm: 256 << 20,
			limits.StdioBytes: defaultStdioBytes,
			// egress.DefaultBudgets' (a test holds them equal).
			limits.EgressConnections: 1024, limits.EgressUpload: 256 << 20, limits.EgressDownload: 4 << 30,
			limits.EgressConnTime: 15 * time.Minute}),
		Permissions: Permissions{Net: netmode.Default, DBPorts: []uint16{postgresPort}, DataDirs: []string{"data", "docs"}, OutputIgnore: slices.Clone(runfiles.DefaultIgnore)},
	}
	def := base
	def.Name, def.Description = "default", "an analysis script: 2 GiB, 30 minutes, no network"
	nb := base
	nb.Name, nb.Description = "notebook", "a Jupyter notebook: its kernel and client talk over loopback; 2 GiB, 10 minutes"
	nb.Limits.Set(limits.Timeout, limits.Int(600*time.Second))
	nb.Net = "loopback"
	pp := base
	pp.Name, pp.Description = "post_process", "reads earlier runs' collected outputs (inputs, read-only) and summarises them: 1 GiB, 10 minutes"
	pp.Limits = with(pp.Limits, L{limits.Timeout: 600 * time.Second, limits.Memory: 1 << 30, limits.CPUQuota: 1, limits.PIDs: 256, limits.Disk: 512 << 20, limits.Shm: 64 << 20})
	pp.RequireInput = true
	tool := base
	tool.Name, tool.Description = "tool", "a short tool run (converters, validators): 512 MiB, 5 minutes, 1 CPU"
	tool.Limits = with(tool.Limits, L{limits.Timeout: 300 * time.Second, limits.Grace: 5 * time.Second, limits.Memory: 512 << 20, limits.CPUQuota: 1, limits.PIDs: 128, limits.Disk: 256 << 20, limits.Shm: 64 << 20})
	ps := map[string]Profile{"default": def, "notebook": nb, "post_process": pp, "tool": tool}
	for n, p := range ps {
		p.Limits = with(p.Limits, defaultOutputBudget(p.Limits.Int(limits.Disk)))
		ps[n] = p
	}
	return ps
}

// keptBuiltins is Builtins made once: they are this binary's constants
// (Builtins looks at nothing of the host), and a server without a
// profiles file made them again for every request (~14 us of its
// startup phase, BenchmarkRequestPath).
var keptBuiltins = sync.OnceValue(Builtins)

// LoadProfiles returns the built-ins overridden and extended by the
// profiles file: path, or DefaultProfilesFile when path is "" (which may be
// absent; a named file must exist). The file is read at every call; the
// profiles of the same bytes as the last call's are not parsed again
// (parsed.go), nor the built-ins made again when there is no file
// (keptBuiltins): their lists are shared with other callers, to be read,
// never written in place.
func LoadProfiles(path string) (map[string]Profile, string, error) {
	ps, path, err := loadKept(path)
	if err != nil {
		return nil, "", err
	}
	return maps.Clone(ps), path, nil
}

// LoadProfile is the profile name of LoadProfiles(path), read from the
// profiles kept without the copy of their map that LoadProfiles makes for
// its caller (a server resolves every request's profile so: the map's
// copy and the error of an absent default file were ~3 us of each
// request's Resolve hot, BenchmarkResolve, and more in a server's cold
// caches). The file is read at every call all the same,
// and the same bytes give the same profiles (parsed.go). !ok: no such
// profile, and known lists those there are, sorted.
func LoadProfile(path, name string) (p Profile, ok bool, known []string, err error) {
	ps, _, err := loadKept(path)
	if err != nil {
		return Profile{}, false, nil, err
	}
	if p, ok = ps[name]; !ok {
		known = Names(ps)
	}
	return p, ok, known, nil
}

// loadKept is LoadProfiles' map as kept (parsed.go, keptBuiltins): the
// callers' to read, never to write.
func loadKept(path string) (map[string]Profile, string, error) {
	named := path != ""
	if !named {
		path = DefaultProfilesFile
	}
	b, err := readProfilesFile(path)
	if err != nil {
		if !named && errors.Is(err, fs.ErrNotExist) {
			return keptBuiltins(), "", nil
		}
		return nil, "", fmt.Errorf("%w: %w", jail.ErrBadSpec, err)
	}
	ps, err := lastParsed.parse(b)
	if err != nil {
		return nil, "", fmt.Errorf("%w: profiles file %s: %w", jail.ErrBadSpec, path, err)
	}
	return ps, path, nil
}

// errNoFile is readProfilesFile's error for a file that does not exist:
// fs.ErrNotExist at once, and the open's *fs.PathError made only when it
// is asked for, as its message is.
type errNoFile struct{ path string }

func (e errNoFile) Error() string { return "read profiles file " + e.path + ": " + e.Unwrap().Error() }
func (e errNoFile) Unwrap() error {
	return &fs.PathError{Op: "open", Path: e.path, Err: unix.ENOENT}
}
func (e errNoFile) Is(target error) bool { return target == fs.ErrNotExist }

// MaxProfilesFileSize bounds the profiles file: a real one is a few KB, and
// the jail runs as root, so a path to /dev/zero or a huge file must not make
// it read without end.
const MaxProfilesFileSize = 1 << 20

// readProfilesFile reads a profiles file that must be a regular file of at
// most MaxProfilesFileSize bytes. It opens without blocking (a FIFO with
// no writer would hang the open), then checks the type on the open fd, so
// what is read is what was checked.
func readProfilesFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err == unix.ENOENT {
		// The default file's usual answer, at every request of a server
		// of a host without one: no message made for it (errNoFile).
		return nil, errNoFile{path}
	}
	if err != nil {
		return nil, fmt.Errorf("read profiles file %s: %w", path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("read profiles file %s: stat: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("profiles file %s is %s, not a regular file: give the path of a JSON file", path, fspath.StatKind(st.Mode))
	}
	if st.Size > MaxProfilesFileSize {
		return nil, fmt.Errorf("profiles file %s is %d bytes, more than the %d a profiles file may have (a real one is a few KB): give the right file", path, st.Size, MaxProfilesFileSize)
	}
	// A regular file ignores O_NONBLOCK; the limit holds even if the file
	// grows after the stat.
	b, err := io.ReadAll(io.LimitReader(f, MaxProfilesFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read profiles file %s: %w", path, err)
	}
	if len(b) > MaxProfilesFileSize {
		return nil, fmt.Errorf("profiles file %s grew past %d bytes while being read: give a file that is not being written", path, MaxProfilesFileSize)
	}
	return b, nil
}

// Names lists profile names sorted.
func Names(ps map[string]Profile) []string {
	var out []string
	for n := range ps {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Origin is where p's values are: its fields, named by their path in
// the profiles file (profiles.gpu.memory).
func (p Profile) Origin() option.Origin { return option.FromProfile(p.Name, option.ProfileField) }

// Check validates one profile's values, naming each field by its path in
// the profiles file (profiles.gpu.net).
func (p Profile) Check() error {
	o := p.Origin()
	if err := p.Limits.Check(func(l *limits.Limit) string { return o.Name(l) }); err != nil {
		return err
	}
	// The network rule is jail/netmode's table's, as the spec's
	// validation asks it, in the profile's words.
	mode, err := netmode.Lookup(p.Net)
	if err != nil {
		return fmt.Errorf("%s %w", o.Name(option.Net), err)
	}
	if pe := mode.CheckPorts(p.AllowTCP); pe != nil {
		return fmt.Errorf("%s %s", o.Name(option.AllowTCP), pe.Needs(o.Name(option.Net)))
	}
	if err := checkHosts(p, mode, o); err != nil { // hosts.go
		return err
	}
	if !slices.Contains(p.DBPorts, postgresPort) {
		return fmt.Errorf("%s must keep %d (PostgreSQL): it can never be opened", o.Name(option.DBPorts), postgresPort)
	}
	for _, port := range p.AllowTCP {
		if port == 0 || slices.Contains(p.DBPorts, port) {
			return fmt.Errorf("%s %d: port 0 or a database port can never be allowed", o.Name(option.AllowTCP), port)
		}
	}
	for _, l := range p.AllowDegraded {
		if err := (promise.OptIn{Kind: promise.OptInDegrade, Protection: l}).Check(); err != nil {
			return fmt.Errorf("%s %w", o.Name(option.AllowDegraded), err)
		}
	}
	if err := promise.ValidateRequireLayers(p.RequireLayers, netmode.Networks()); err != nil {
		return fmt.Errorf("%s: %w", o.Name(option.RequireLayers), err)
	}
	if err := runfiles.CheckIgnore(p.OutputIgnore); err != nil {
		return fmt.Errorf("%s: %w", o.Name(option.OutputIgnore), err)
	}
	for i, kv := range p.Env {
		if err := jail.ValidateEnv(kv); err != nil {
			return fmt.Errorf("%s %w", o.NameAt(option.Env, i), err)
		}
	}
	return nil
}

// Spec is a run of p: every field a profile decides, set from it. The
// caller adds the run's own (ID, command, tmp-root, root, destinations,
// identity, values over the profile, recorded in From); `run` and `check`
// both start here, so a profile field is mapped in one place. From says
// the values are the profile's, with those given over it written as flags:
// a caller that takes them in another language (a request) sets From to
// option.FromProfile(p.Name, its language) before adding them.
func (p Profile) Spec() jail.Spec {
	return jail.Spec{
		Profile: p.Name, Limits: p.Limits, From: option.FromProfile(p.Name, option.Flag),
		Env: append([]string{}, p.Env...), DataDirs: p.DataDirs,
		Net: p.Net, AllowTCP: p.AllowTCP, DBPorts: p.DBPorts,
		AllowHosts: slices.Clone(p.AllowHosts), AllowRanges: slices.Clone(p.AllowRanges),
		ReadOnly:      append([]string{}, p.ReadOnly...),
		ReadWrite:     append([]string{}, p.ReadWrite...),
		OptIns:        p.OptIns(),
		RequireLayers: p.RequireLayers,
		OutputIgnore:  slices.Clone(p.OutputIgnore),
	}
}

// OptIns are the protections p gives up by name: its allow_degraded,
// checked when the profile was read (Check).
func (p Profile) OptIns() promise.OptIns {
	out := make(promise.OptIns, len(p.AllowDegraded))
	for i, l := range p.AllowDegraded {
		out[i] = promise.OptIn{Kind: promise.OptInDegrade, Protection: l}
	}
	return out
}

// defaultStdioBytes is the built-in profiles' budget of each of stdout and
// stderr: 4 MiB of head and 4 MiB of tail. A log, a progress bar or a
// traceback fits many times over; a print loop costs the caller (a
// platform holding ten runs' output in memory) at most 16 MiB a run, and
// the jail's own memory at most the 4 MiB tail per stream.
const defaultStdioBytes = 8 << 20

// defaultOutputBudget is the built-in profiles' budget, for a disk budget
// of disk: no honest analysis whose run directory holds at most disk bytes
// stores more than disk bytes of files, so the byte budgets are the disk
// budget; ten thousand entries and three minutes are far beyond what an
// honest analysis leaves and what hashing a disk budget's worth takes.
func defaultOutputBudget(disk int64) L {
	return L{limits.OutputEntries: 10_000, limits.OutputBytes: disk, limits.OutputFileBytes: disk, limits.OutputTime: 3 * time.Minute}
}

// L is a value per row, for limits.Of.
type L = map[*limits.Limit]any

// with is v with the rows of m set.
func with(v limits.Values, m L) limits.Values {
	set := limits.Of(m)
	for l := range m {
		v.Set(l, set.Get(l))
	}
	return v
}
