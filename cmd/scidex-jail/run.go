package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scidex/scidex-jail/cmd/scidex-jail/internal/earlysig"
	"github.com/scidex/scidex-jail/jail"
)

// runCmd is `scidex-jail run`. Limits left empty come from the profile.
type runCmd struct {
	ID      string `name:"id" required:"" help:"Analysis ID: letters, digits, '.', '_', '-' (at most 128). The run directory is <tmp-root>/scidex-analysis-<ID>."`
	Profile string `name:"profile" short:"p" default:"default" help:"Profile of limits and permissions: default, notebook, post_process, tool, or one from the profiles file (see 'scidex-jail profiles')."`
	Config  string `name:"config" placeholder:"FILE" help:"Profiles file (JSON). Default: /etc/scidex-jail/profiles.json when it exists."`
	Report  string `name:"report" placeholder:"FILE" help:"Write the JSON report to FILE (atomically); its directory must exist and be writable, outside every run directory. The one-line summary always goes to stderr; the whole report too if it cannot be delivered (exit 122)."`

	Timeout string `name:"timeout" placeholder:"DUR" help:"Wall-clock budget, e.g. 90s, 30m, 1.5s (none or 0 = no timeout). On expiry: SIGTERM, then after --grace every process is killed."`
	Grace   string `name:"grace" placeholder:"DUR" help:"Time between SIGTERM and SIGKILL on timeout or cancel."`
	Memory  string `name:"memory" placeholder:"SIZE" help:"Memory limit of the run's cgroup, e.g. 512M, 2G (binary units; none or 0 = no limit). The run directory's tmpfs counts toward it."`
	Swap    string `name:"swap" placeholder:"SIZE" help:"Swap the run may use (default 0)."`
	CPUs    string `name:"cpus" placeholder:"N" help:"CPU quota in CPUs, e.g. 0.5 or 2 (none = no quota; 0 is refused)."`
	PIDs    string `name:"pids" placeholder:"N" help:"Limit on processes and threads, 16 to 4194304 (none = no limit; 0 is refused)."`
	Disk    string `name:"disk" placeholder:"SIZE" help:"Size budget of the run directory, a tmpfs: writes beyond it fail with ENOSPC; at most --memory (none or 0 = no budget: the directory lives on --tmp-root's filesystem)."`
	Shm     string `name:"shm" placeholder:"SIZE" help:"Size of the private /dev/shm (more than 0, at most --memory)."`

	Net      string   `name:"net" placeholder:"MODE" help:"Network: none (no network), loopback (lo only, e.g. for notebook kernels), host (the host's network; outbound TCP only to --allow-tcp ports; UDP is not restricted)."`
	AllowTCP []string `name:"allow-tcp" placeholder:"PORT" sep:"," help:"Outbound TCP ports allowed with --net host. PostgreSQL's 5432 can never be allowed."`

	Root         string   `name:"root" placeholder:"DIR" help:"The platform's checkout: its data/ and docs/ are readable (read-only) by the analysis. Default: the current directory."`
	Input        []string `name:"input" sep:"none" placeholder:"DIR" help:"An earlier run's collected outputs, readable (read-only) at the same path (repeatable; the post_process profile needs one)."`
	RO           []string `name:"ro" sep:"none" placeholder:"PATH" help:"Another host path readable (read-only) at the same path (repeatable)."`
	RW           []string `name:"rw" sep:"none" placeholder:"PATH" help:"Another host path writable at the same path (repeatable)."`
	Keep         bool     `name:"keep" help:"Keep the run directory afterwards (default: removed)."`
	Collect      string   `name:"collect" placeholder:"DIR" help:"Copy the regular files of the run directory to DIR before it is removed (links are never followed). DIR must be new or empty, outside every run directory and every input."`
	CollectMerge bool     `name:"collect-merge" help:"Let --collect DIR already hold files; one of the same name as an output is an error (delivery_failed), never overwritten."`
	TmpRoot      string   `name:"tmp-root" default:"/tmp" placeholder:"DIR" help:"Absolute directory that holds the run directory."`
	Env          []string `name:"env" sep:"none" placeholder:"K=V" help:"Set an environment variable for the analysis (repeatable). The host's environment is not passed in."`

	UID          int      `name:"uid" default:"65534" help:"Host uid the analysis runs as when scidex-jail runs as root (never 0)."`
	GID          int      `name:"gid" default:"65534" help:"Host gid the analysis runs as when scidex-jail runs as root (never 0)."`
	CgroupParent string   `name:"cgroup-parent" placeholder:"PATH" help:"Delegated cgroup under which the run's leaf is made. Default: the jail's own cgroup."`
	Degrade      []string `name:"allow-degraded" sep:"none" placeholder:"LAYER" help:"Run even if the kernel cannot enforce LAYER in full (landlock); the report lists what was lost."`
	Disable      []string `name:"unsafe-disable" sep:"none" placeholder:"LAYER" help:"Turn a protection off (landlock, seccomp, cgroup): for benchmarks and debugging only; recorded in the report."`

	Command []string `arg:"" optional:"" name:"command" help:"The command to run and its arguments, after '--': everything after '--' is passed untouched."`

	// afterDash is what followed the first "--" on the command line, cut
	// off before kong saw the rest.
	afterDash []string
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{jail.ErrBadSpec}, args...)...)
}

// spec resolves the profile, then the flags over it, into a validated Spec.
func (c *runCmd) spec() (*jail.Spec, error) {
	profiles, _, err := jail.LoadProfiles(c.Config)
	if err != nil {
		return nil, err
	}
	p, ok := profiles[c.Profile]
	if !ok {
		return nil, bad("--profile %q: no such profile; known: %s", c.Profile, strings.Join(jail.Names(profiles), ", "))
	}
	if len(c.Command) > 0 {
		return nil, bad("%q given before '--': put the command after '--', e.g. scidex-jail run --id %s -- %s", c.Command[0], c.ID, c.Command[0])
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, bad("cannot read the current directory: %w", err)
	}
	// Not filepath.Join: it would clean "a/../b" lexically, where the
	// jail resolves paths as the kernel walks them (links first).
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return strings.TrimRight(cwd, "/") + "/" + p
	}
	s := &jail.Spec{
		ID: c.ID, Command: c.afterDash, Env: append(append([]string{}, p.Env...), c.Env...),
		TmpRoot: c.TmpRoot, Timeout: p.Timeout, Grace: p.Grace, Keep: c.Keep, Collect: abs(c.Collect),
		CollectMerge: c.CollectMerge, Report: abs(c.Report),
		HostUID: c.UID, HostGID: c.GID, Profile: p.Name,
		Root: abs(c.Root), DataDirs: p.DataDirs, DiskBytes: p.Disk, ShmBytes: p.Shm,
		Net: p.Net, AllowTCP: p.AllowTCP, DBPorts: p.DBPorts,
		Resources:    jail.Resources{MemoryBytes: p.Memory, SwapBytes: p.Swap, CPUs: p.CPUs, PIDs: p.PIDs},
		CgroupParent: c.CgroupParent, AllowDegraded: append(append([]string{}, p.AllowDegraded...), c.Degrade...),
		Disable: c.Disable, RequireLayers: p.RequireLayers,
	}
	if s.Root == "" {
		s.Root = cwd
	}
	for _, l := range []struct {
		dst  *[]string
		from []string
	}{{&s.ReadOnly, p.ReadOnly}, {&s.ReadOnly, c.Input}, {&s.ReadOnly, c.RO}, {&s.ReadWrite, p.ReadWrite}, {&s.ReadWrite, c.RW}} {
		for _, path := range l.from {
			*l.dst = append(*l.dst, abs(path))
		}
	}
	if p.RequireInput && len(c.Input) == 0 {
		return nil, bad("profile %s reads earlier outputs: give them with --input DIR (e.g. a --collect directory of an earlier run)", p.Name)
	}
	if err := c.applyFlags(s); err != nil {
		return nil, err
	}
	// The tmpfs sizes of a profile follow a smaller --memory given here
	// (they count toward it); sizes given here are checked, never changed.
	if mem := s.Resources.MemoryBytes; c.Memory != "" && mem > 0 {
		if c.Disk == "" && s.DiskBytes > mem {
			s.DiskBytes = mem
		}
		if c.Shm == "" && s.ShmBytes > mem {
			s.ShmBytes = mem
		}
	}
	return s, s.Validate()
}

// applyFlags puts the flags that were given over the profile's values.
// Every limit is read by jail's parser of its kind, so the command line and
// the profiles file follow one rule (README, "Limits").
func (c *runCmd) applyFlags(s *jail.Spec) error {
	set := func(flag, v string, apply func(string) error) error {
		if v == "" {
			return nil
		}
		if err := apply(v); err != nil {
			return bad("--%s: %w", flag, err)
		}
		return nil
	}
	size := func(parse func(string) (int64, error), dst *int64) func(string) error {
		return func(v string) (err error) { *dst, err = parse(v); return err }
	}
	for _, f := range []error{
		set("timeout", c.Timeout, func(v string) (err error) { s.Timeout, err = jail.ParseTimeout(v); return err }),
		set("grace", c.Grace, func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("%q: give a duration such as 5s or 500ms (0 = SIGKILL at once)", v)
			}
			s.Grace = d
			return nil
		}),
		set("memory", c.Memory, size(jail.ParseSizeLimit, &s.Resources.MemoryBytes)),
		set("swap", c.Swap, size(jail.ParseSize, &s.Resources.SwapBytes)),
		set("disk", c.Disk, size(jail.ParseSizeLimit, &s.DiskBytes)),
		set("shm", c.Shm, size(jail.ParseSize, &s.ShmBytes)),
		set("cpus", c.CPUs, func(v string) (err error) { s.Resources.CPUs, err = jail.ParseCPUs(v); return err }),
		set("pids", c.PIDs, func(v string) (err error) { s.Resources.PIDs, err = jail.ParsePIDs(v); return err }),
	} {
		if f != nil {
			return f
		}
	}
	if c.Net != "" {
		s.Net = jail.NetMode(c.Net)
	}
	if len(c.AllowTCP) > 0 {
		s.AllowTCP = nil
		for _, p := range c.AllowTCP {
			v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
			if err != nil || v == 0 {
				return bad("--allow-tcp %q: give TCP port numbers 1-65535, comma-separated", p)
			}
			s.AllowTCP = append(s.AllowTCP, uint16(v))
		}
	}
	return nil
}

func (c *runCmd) Run() error {
	s, err := c.spec()
	if err != nil {
		return err
	}
	rep, err := jail.Run(s, earlysig.C)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, rep.Summary())
	if rep.Status == jail.StatusDeliveryFailed {
		// The report may not have reached --report at all: the caller
		// gets it in full here.
		b, _ := json.MarshalIndent(rep, "", "  ")
		os.Stderr.Write(append(b, '\n'))
	}
	return exitError{rep.ExitCode}
}
