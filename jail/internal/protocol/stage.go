package protocol

// Stage is where a run failed before its target ran: the report's
// setup_error.stage, and the Stage of a KindError message. The list is
// closed: a run reports no stage that is not a constant below, Stages
// returns them all, the report's JSON Schema enumerates them, and the
// README's troubleshooting table has a row for each (what failed, what to
// check, how to fix it), held to this list by a test of cmd/scidex-jail.
//
// The supervisor's stages come first, then the init's (its setup steps,
// each named by the stage it fails with), in the order a run meets them;
// StageInit, last, is also the init dying at any of its own.
type Stage string

// The supervisor's stages: the plan, then the steps that start the init.
const (
	StagePromises Stage = "promises" // the plan: a promise would hold with fewer layers than required, or a rootless run keeps a group that opens what the view shows
	StagePolicy   Stage = "policy"   // the plan: no seccomp program for the architecture and network mode
	StageCgroup   Stage = "cgroup"   // the run's cgroup leaf could not be made, written or entered
	StageSpawn    Stage = "spawn"    // the init could not be started in its namespaces, or took neither its config nor "go"
	StageRunDir   Stage = "rundir"   // the run directory is not where the plan put it (a bug)
	StageMeminfo  Stage = "meminfo"  // the run's /proc/meminfo could not be made from the leaf's usage
)

// The init's stages, its setup steps in order (initproc).
const (
	StageConfig   Stage = "config"   // the init could not read its config from the supervisor
	StageCPUs     Stage = "cpus"     // pinning the init to the run's CPUs
	StageMounts   Stage = "mounts"   // building the mount view and pivoting into it
	StageHostname Stage = "hostname" // setting the run's hostname
	StageNetwork  Stage = "network"  // bringing lo up (network mode loopback)
	StageIdentity Stage = "identity" // dropping to the target's uid, gid, groups, no capabilities, no_new_privs
	StageLandlock Stage = "landlock" // building or applying the Landlock ruleset
	StageFDs      Stage = "fds"      // marking every fd above 2 close-on-exec
	StageSeccomp  Stage = "seccomp"  // loading the seccomp filter
	StageWaitGo   Stage = "wait-go"  // waiting for the supervisor's "go"
	StageExec     Stage = "exec"     // the target's fork and exec: not found (127), not executable (126), the PID limit
)

// StageInit is the init program itself: missing, unsafe to exec or of
// another version (the supervisor's check and handshake), or dead before it
// started the target (killed at one of its steps).
const StageInit Stage = "init"

// stages are every Stage, in the order of the README's troubleshooting
// table.
var stages = []Stage{
	StagePromises, StagePolicy, StageCgroup, StageSpawn, StageRunDir, StageMeminfo,
	StageConfig, StageCPUs, StageMounts, StageHostname, StageNetwork, StageIdentity,
	StageLandlock, StageFDs, StageSeccomp, StageWaitGo, StageExec,
	StageInit,
}

// Stages returns every stage a run can report, in order (a fresh slice).
func Stages() []Stage { return append([]Stage(nil), stages...) }
