package jail

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/jail/uidlease"
	"github.com/scidex/scidex-jail/jail/view"
)

// Plan is one run, decided: what the supervisor creates and what the init
// is told, before anything exists. BuildPlan makes it from a Spec and a
// view.HostView without touching the host; `run` executes it, `check` executes
// it as a probe, so the two cannot drift apart.
type Plan struct {
	Namespaces []Namespace
	IDs        IDMap
	// Cgroup is the run's leaf: its delegated parent ("" = the jail's own
	// cgroup) and limits; nil when the layer is disabled by name.
	Cgroup *CgroupPlan
	// Init is the init's whole config.
	Init protocol.Config
	// Enforced is what the report says was in force, as far as it is
	// known before the run: namespaces, identity, network, mounts,
	// promises, the seccomp filter. The init adds what it found applying
	// the rest (the Landlock ABI, the CPUs).
	Enforced report.EnforcedReport
	// Promises are the contract on this host: which layers hold each one.
	Promises []promise.PromiseState
	// Unheld are the limits the spec asks for that no layer holds on this
	// run (unheld.go): the report gives them as 0, names them in
	// limits.not_enforced and says so in its completion notes.
	Unheld []*limits.Limit
	// Run is the supervisor's own part: the run directory, the time
	// budget, the post-run work and where the results go.
	Run RunPlan
	// Hook is the network mode's supervisor-side work (netmode.Hook), nil
	// for a mode without one.
	Hook *HookPlan
}

// RunPlan is what the supervisor does around the init, decided with the
// rest of the plan: it consults nothing else.
type RunPlan struct {
	ID      string
	TmpRoot string // where the run directory is made (at Init.RunDir)
	// Owner is the run directory's owner on the host (uid, gid).
	Owner   [2]int
	Timeout time.Duration // wall-clock budget; 0 = none
	Grace   time.Duration // SIGTERM to SIGKILL on timeout or cancel
	Outputs OutputBudget  // bounds the post-run work
	// StdioBytes bounds each of the analysis' relayed stdout and stderr
	// (jail/relay); 0: no budget.
	StdioBytes int64
	// DiskBytes is the tmpfs run directory's budget (0: bound from the
	// host, read from there too if the init could not be).
	DiskBytes int64
	Keep      bool
	// KeepTo is where a kept tmpfs run directory is copied to on the host
	// (under the tmp-root, links resolved: the copy walks without
	// following any); "" when nothing is copied there.
	KeepTo  string
	Collect string // "" = no copy
	Report  string // "" = none
	// Leased is the range the run's ids were leased from (uids.go): a
	// leftover run directory of this ID owned by one of its ids is a dead
	// run's, which the run takes over. Zero: fixed or the caller's ids.
	Leased uidlease.Range
}

// Namespace is one namespace the init is born in.
type Namespace struct {
	Name string
	Flag uintptr
}

// IDMap is how the analysis' identity maps to the host: InsideUID inside,
// HostUID/HostGID outside.
type IDMap struct {
	HostUID, HostGID int
	Setgroups        bool // false when rootless: setgroups must be denied before an unprivileged gid_map write
	// Groups are the caller's supplementary groups a rootless run keeps
	// (it cannot drop them: groups.go); nil when Setgroups clears them.
	Groups []report.HostGroup
	// LeasedFrom is the range HostUID/HostGID were leased from (uids.go);
	// "" when fixed or rootless.
	LeasedFrom string
}

// CgroupPlan is the run's cgroup leaf, before it exists: the supervisor
// makes it from this alone (jail/supervise's createLeaf).
type CgroupPlan struct {
	Parent string
	// Name is the leaf's name before the random suffix each run adds:
	// scidex-<id>.
	Name   string
	Limits cgroupfs.Limits
}

// PlanError is a plan that cannot be carried out: the stage it belongs to
// (promises, policy) and why.
type PlanError struct {
	Stage Stage
	Err   error
}

func (e *PlanError) Error() string { return e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// allNamespaces is the fixed set; the network namespace is left out in a
// network mode that shares the host's (netmode.Mode.OwnNamespace).
var allNamespaces = []Namespace{
	{"user", unix.CLONE_NEWUSER}, {"mount", unix.CLONE_NEWNS}, {"pid", unix.CLONE_NEWPID},
	{"net", unix.CLONE_NEWNET}, {"ipc", unix.CLONE_NEWIPC}, {"uts", unix.CLONE_NEWUTS},
	{"cgroup", unix.CLONE_NEWCGROUP},
}

// BuildPlan decides a run of the validated spec r on host h. It is pure:
// everything it needs of the host is in h. It returns the warnings a run
// reports (a data dir that is not there) and, when the run must not start,
// a *PlanError; the plan is returned even then, for its promises.
func BuildPlan(r *Resolved, h view.HostView) (*Plan, []string, error) {
	s := &r.Spec
	net, err := netmode.Lookup(s.Net)
	if err != nil {
		return &Plan{}, nil, &PlanError{Stage: protocol.StagePolicy, Err: fmt.Errorf("network mode of a validated spec (bug): %w", err)}
	}
	// The host says what the kernel offers; the spec, what the caller
	// switched off, and its network mode's row what the network's promises
	// have.
	layers := h.Layers
	layers.Net, layers.Disabled = net.Network(), s.OptIns.Disabled()
	p := &Plan{
		Namespaces: planNamespaces(net),
		IDs:        planIDs(r, h),
		Promises:   promise.EvaluatePromises(layers, s.RequireLayers),
		Run:        planRun(r),
		Unheld:     unheldLimits(s),
	}
	// A data dir the platform's root lacks is no warning on every run:
	// the report's enforced.mounts.data_dirs says it (dataDirsReport).
	var warnings []string
	if !s.disabled(promise.ProtectCgroup) {
		p.Cgroup = &CgroupPlan{Parent: s.CgroupParent, Name: runfiles.LeafName(s.ID), Limits: cgroupLimits(s.Limits)}
	}
	p.Init = planInit(s, h, p.IDs, net)
	p.Run.Outputs.Links = linkTargets(p.Init.Mounts.Links)
	// The analysis' own user database, with the HOME its environment has.
	p.Init.Mounts.Files = view.UserDB(p.Init.Env, h)
	p.Hook = planHook(s, h, net, &p.Init) // hosts.go: after the user database, before the report's list of generated files
	p.Enforced = planEnforced(s, p)
	short, err := promise.Check(p.Promises, s.OptIns)
	if err != nil {
		return p, warnings, &PlanError{Stage: protocol.StagePromises, Err: err}
	}
	// The groups a rootless run cannot drop must not open what the view
	// shows (view.CheckExposure).
	if err := view.CheckExposure(p.IDs.HostUID, p.IDs.HostGID, p.IDs.Groups, h.Exposed); err != nil {
		return p, warnings, &PlanError{Stage: protocol.StagePromises, Err: err}
	}
	for _, st := range short {
		p.Enforced.Degraded = append(p.Enforced.Degraded, st.Degraded())
	}
	if sc := p.Init.Security.Seccomp; sc != nil {
		rep, err := seccompReport(*sc)
		if err != nil {
			return p, warnings, &PlanError{Stage: protocol.StagePolicy, Err: fmt.Errorf("seccomp policy %s: %w", sc, err)}
		}
		p.Enforced.Seccomp = rep
	}
	return p, warnings, nil
}

func planRun(r *Resolved) RunPlan {
	p := RunPlan{
		ID: r.ID, TmpRoot: r.TmpRoot, Owner: [2]int{r.HostUID, r.HostGID},
		Timeout: r.Limits.Duration(limits.Timeout), Grace: r.Limits.Duration(limits.Grace), Outputs: r.outputBudget(), StdioBytes: r.Limits.Int(limits.StdioBytes), DiskBytes: r.Limits.Int(limits.Disk),
		Keep: r.Keep, Collect: r.Collect, Report: r.Report,
	}
	if r.Keep && r.Limits.Int(limits.Disk) > 0 {
		p.KeepTo = filepath.Join(r.RealTmpRoot, runfiles.DirName(r.ID))
	}
	if r.LeasedFrom != "" {
		p.Leased = r.uidRange()
	}
	return p
}

func planNamespaces(net netmode.Mode) []Namespace {
	var out []Namespace
	for _, ns := range allNamespaces {
		if ns.Name == "net" && !net.OwnNamespace {
			continue
		}
		out = append(out, ns)
	}
	return out
}

func planIDs(s *Resolved, h view.HostView) IDMap {
	if h.EUID != 0 {
		// Rootless: the only uid we may map is our own.
		ids := IDMap{HostUID: h.EUID, HostGID: h.EGID}
		ids.Groups = planGroups(ids, h)
		return ids
	}
	return IDMap{HostUID: s.HostUID, HostGID: s.HostGID, Setgroups: true, LeasedFrom: s.LeasedFrom}
}

// planInit is the init's config: the mount view, the Landlock and seccomp
// policies, the target's argv and environment; net is the network mode's
// row.
func planInit(s *Spec, h view.HostView, ids IDMap, net netmode.Mode) protocol.Config {
	runDir := s.RunDir()
	var dataEnv []string // where each data dir appears inside, so a script need not be told
	for _, d := range s.DataDirs {
		if p := filepath.Join(s.Root, d); slices.Contains(h.DataDirs, p) {
			dataEnv = append(dataEnv, "SCIDEX_"+envName(d)+"_DIR="+p)
		}
	}
	ro := append(append([]string{}, h.DataDirs...), s.ReadOnly...)
	links := dataLinks(s, h)
	// Bound read-only besides ro: caches, and resolv.conf's target when it
	// lies outside /etc.
	sysRO := append([]string{}, h.Extras...)
	if h.DNS != "" && !strings.HasPrefix(h.DNS, "/etc/") {
		sysRO = append(sysRO, h.DNS)
	}
	hostname := "scidex-" + s.ID
	if len(hostname) > 64 {
		hostname = hostname[:64]
	}
	c := protocol.Config{
		Command:   s.Command,
		Env:       s.targetEnv(append(dataEnv, modeEnv(s, net)...)), // the mode's environment, under the caller's --env
		RunDir:    runDir,
		Hostname:  hostname,
		UID:       InsideUID,
		GID:       InsideUID,
		Setgroups: ids.Setgroups,
		Groups:    insideGroups(ids.Groups),
		Loopback:  net.Loopback,
		Mounts: protocol.Mounts{
			System:      h.System,
			ReadOnly:    append(sysRO, ro...),
			ReadWrite:   s.ReadWrite,
			Links:       links,
			RunDir:      runDir,
			RunDirBytes: s.Limits.Int(limits.Disk),
			ShmBytes:    s.Limits.Int(limits.Shm),
		},
		Security: protocol.Security{
			Landlock: landlockPolicy(s, h, ro, net),
			Seccomp:  seccompPolicy(s, net),
		},
	}
	planScratch(s, &c.Mounts)
	planLimitsView(s, &c)
	return c
}

// planEnforced is the static part of the report's enforced.
func planEnforced(s *Spec, p *Plan) report.EnforcedReport {
	e := report.EnforcedReport{
		HostUID: p.IDs.HostUID, HostGID: p.IDs.HostGID, UID: InsideUID,
		NoNewPrivs: true, Capabilities: "none",
		Net: string(s.Net), AllowTCP: append([]uint16{}, s.AllowTCP...),
		Promises: promise.Report(p.Promises),
		Identity: identityReport(p.IDs, promise.FSHeldBy(p.Promises)),
		Degraded: []string{},
	}
	for _, ns := range p.Namespaces {
		e.Namespaces = append(e.Namespaces, ns.Name)
	}
	m := &e.Mounts
	m.ReadOnly = p.Init.Mounts.ReadOnly
	m.Generated = []string{}
	for _, f := range p.Init.Mounts.Files {
		m.Generated = append(m.Generated, f.Path)
	}
	m.ReadWrite = append([]string{}, p.Init.Mounts.ReadWrite...)
	m.ShmBytes = p.Init.Mounts.ShmBytes
	for _, se := range p.Init.Mounts.System {
		m.System = append(m.System, se.Path)
	}
	m.RunDir = "bound from the host (no disk budget)"
	if s.Limits.Int(limits.Disk) > 0 {
		m.RunDir = fmt.Sprintf("tmpfs of %d bytes (disk budget)", s.Limits.Int(limits.Disk))
	}
	m.Scratch = scratchReport(s)
	m.DataDirs = dataDirsReport(s, p.Init.Mounts.ReadOnly, p.Init.Mounts.Links)
	m.Meminfo = meminfoReport(s)
	return e
}

// envName turns a data dir's name into the middle of an environment
// variable's name: data -> DATA, raw-v2 -> RAW_V2.
func envName(d string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToUpper(d))
}

// blasThreads caps the thread pools of BLAS and OpenMP at the CPU quota,
// unless the caller chose: more threads than CPUs only thrash under a
// quota, and each one counts against the PID limit.
func blasThreads(env []string, cpus float64) []string {
	if cpus <= 0 {
		return env
	}
	n := strconv.Itoa(quotaCPUs(cpus))
	for _, k := range blasVars {
		if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k) }) {
			env = append(env, k+n)
		}
	}
	return env
}

// blasVars are the thread counts blasThreads sets, with their "=".
var blasVars = [...]string{"OMP_NUM_THREADS=", "OPENBLAS_NUM_THREADS=", "MKL_NUM_THREADS="}

// SecurityConfig is the Landlock and seccomp half of the init's config
// (Plan.Init.Security): what `check` hands its probe child, so that the
// child applies exactly what a run's init would.
type SecurityConfig = protocol.Security
