package supervise

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/seccomp"
)

// testFacts are the facts of a run that started, ran 1.5 s and exited 0
// with one output file, as a run's steps would gather them; each case
// changes what its run did.
func testFacts(t *testing.T) runFacts {
	t.Helper()
	s := testSpec()
	plan, _, err := jail.BuildPlan(asResolved(s), testHost())
	if err != nil {
		t.Fatalf("BuildPlan(testSpec()) = %v, want nil", err)
	}
	started := &protocol.Started{Pid: 2, Micros: 300, Landlock: &protocol.LandlockFound{ABI: 5, Degraded: []string{"scope (needs ABI 6): lost"}}, CPUs: "0-1"}
	exited := &protocol.Exited{WallUsec: 1_500_000, UserUsec: 250_000, SysUsec: 50_000, MaxRSSKB: 100}
	return runFacts{
		spec: &jail.Resolved{Spec: *s, RealTmpRoot: s.TmpRoot}, t0: time.Unix(1e9, 0), plan: plan,
		end:    ending{started: started, tStart: time.Unix(1e9, 0), exited: exited},
		out:    outputsRead{read: true, done: true, list: []runfiles.Output{{Path: "a.csv", Type: runfiles.OutputFile, Size: 3, SHA256: "ab"}}},
		cgroup: &report.CgroupReport{Version: 2, Paths: []string{"/sys/fs/cgroup/x"}, Written: map[string]string{"pids.max": "64"}},
		usage:  &cgroupfs.Usage{}, wall: 1.5,
		warnings: []string{"data/ not found"},
		phases:   []report.Phase{{Name: "validate", Where: "supervisor", Micros: 10}, {Name: "exec", Where: "init", Micros: 300}},
	}
}

// TestAssembleReport: the report is built from the run's facts alone: the
// spec's limits, the plan's enforced part with what the init applied, the
// leaf and its usage, the init's accounting, the outputs and the phases.
func TestAssembleReport(t *testing.T) {
	f := testFacts(t)
	f.cgroup.Usage = reportUsage(f.usage)
	r := assembleReport(f)
	// What the init enforced and did not say: the filter of the plan's
	// policy, the Landlock rules of its policy at the ABI the init found.
	pol := f.plan.Init.Security
	prog, err := seccomp.Lookup(*pol.Seccomp)
	if err != nil {
		t.Fatal(err)
	}
	wantSeccomp := &report.SeccompReport{Policy: pol.Seccomp.String(), Arch: prog.Arch, SHA256: prog.SHA256, Denied: prog.Denied()}
	wantLandlock := &report.LandlockReport{ABI: 5, Required: pol.Landlock.Required(), Rules: pol.Landlock.Rules(5), Degraded: f.end.started.Landlock.Degraded}
	if len(wantLandlock.Rules) == 0 || len(wantSeccomp.Denied) == 0 {
		t.Fatalf("plan's Landlock rules %q, seccomp's denied %q, want some", wantLandlock.Rules, wantSeccomp.Denied)
	}
	if r.Status != report.StatusOK || r.ExitCode != 0 || r.SetupError != nil {
		t.Errorf("assembleReport = %s, %d, %+v, want ok, 0, no setup error", r.Status, r.ExitCode, r.SetupError)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"id", r.ID, "a1"},
		{"run_dir", r.RunDir, "/tmp/scidex-analysis-a1"},
		{"limits.pids", r.Limits.Values.Int(limits.PIDs), int64(64)},
		{"wall_seconds", r.WallSeconds, 1.5},
		{"cpu_user_seconds", r.CPUUserSecs, 0.25},
		{"cpu_system_seconds", r.CPUSystemSecs, 0.05},
		{"peak_rss_bytes", r.PeakRSSBytes, int64(100 * 1024)},
		{"outputs", r.Outputs, []report.Output{{Path: "a.csv", Type: report.OutputFile, Size: 3, SHA256: "ab"}}},
		{"phases", r.Phases, f.phases},
		{"warnings", r.Warnings, f.warnings},
		{"enforced.namespaces", r.Enforced.Namespaces, f.plan.Enforced.Namespaces},
		{"enforced.mounts", r.Enforced.Mounts, f.plan.Enforced.Mounts},
		{"enforced.cpus", r.Enforced.CPUs, "0-1"},
		{"enforced.seccomp", r.Enforced.Seccomp, wantSeccomp},
		{"enforced.landlock", r.Enforced.Landlock, wantLandlock},
		{"enforced.cgroup", r.Enforced.Cgroup, f.cgroup},
		{"started_at", r.Started, f.t0.UTC()},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("assembleReport().%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if !strings.Contains(r.CompletionNotes, "finished normally (exit code 0) after 1.50 s; 1 output file(s) listed") {
		t.Errorf("completion notes = %q, want the ok sentence with 1 output file", r.CompletionNotes)
	}
	// The report owns its phases: the report phase added on delivery
	// does not reach the facts'.
	r.Phases[0].Micros = 99
	if f.phases[0].Micros != 10 {
		t.Errorf("assembleReport shares its phases with the facts")
	}
}

// TestAssembleReportNotStarted: a run whose target never started reports
// the promises it was decided on, not the plan's namespaces or mounts, and
// no outputs unless the run directory was read.
func TestAssembleReportNotStarted(t *testing.T) {
	f := testFacts(t)
	f.end, f.out, f.cgroup, f.wall = ending{}, outputsRead{}, nil, 0
	f.fail = failAt("cgroup", errors.New("create cgroup leaf: no"))
	r := assembleReport(f)
	if r.Status != report.StatusSetupError || r.ExitCode != protocol.ExitSetup || r.SetupError == nil || r.SetupError.Stage != "cgroup" {
		t.Fatalf("assembleReport = %s, %d, %+v, want setup_error, 125, stage cgroup", r.Status, r.ExitCode, r.SetupError)
	}
	if r.Enforced.Namespaces != nil || r.Enforced.Cgroup != nil || r.Enforced.Seccomp != nil {
		t.Errorf("enforced = %+v, want no namespaces, cgroup or seccomp before the target started", r.Enforced)
	}
	if !reflect.DeepEqual(r.Enforced.Promises, f.plan.Enforced.Promises) || !reflect.DeepEqual(r.Enforced.Identity, f.plan.Enforced.Identity) {
		t.Errorf("enforced promises, identity = %v, %+v, want the plan's", r.Enforced.Promises, r.Enforced.Identity)
	}
	if r.Outputs == nil || len(r.Outputs) != 0 {
		t.Errorf("outputs = %#v, want an empty list", r.Outputs)
	}
}

// TestSettleFacts: the run's end, settled from what its steps returned
// (the event loop's ending, the signal machine's facts, the init's wait
// status, the leaf's usage, the outputs), without running anything.
func TestSettleFacts(t *testing.T) {
	cases := []struct {
		name   string
		change func(*runFacts)
		status report.Status
		code   int
		signal string
		stage  jail.Stage
	}{
		{"ok", func(*runFacts) {}, report.StatusOK, 0, "", ""},
		{"exit nonzero", func(f *runFacts) { f.end.exited.ExitCode = 3 }, report.StatusExitNonzero, 3, "", ""},
		{"oom killed", func(f *runFacts) {
			f.end.exited.ExitCode, f.end.exited.Signal, f.usage.OOMKills = 137, int(syscall.SIGKILL), 1
		}, report.StatusOOMKilled, 137, "SIGKILL", ""},
		{"timeout", func(f *runFacts) {
			f.sigs.TimedOut, f.end.exited.ExitCode, f.end.exited.Signal = true, 143, int(syscall.SIGTERM)
		}, report.StatusTimeout, 143, "SIGTERM", ""},
		{"init error", func(f *runFacts) {
			f.end = ending{failure: initFailure(&protocol.SetupFailed{Stage: "landlock", Error: "no", ExitCode: protocol.ExitSetup})}
			f.init = initconn.End{WS: 125 << 8, OK: true}
		}, report.StatusSetupError, protocol.ExitSetup, "", "landlock"},
		{"init killed in setup", func(f *runFacts) {
			f.end, f.init = ending{}, initconn.End{WS: unix.WaitStatus(unix.SIGKILL), OK: true}
		}, report.StatusSetupError, protocol.ExitSetup, "SIGKILL", "init"},
		{"init died after start", func(f *runFacts) {
			f.end.exited, f.init = nil, initconn.End{WS: unix.WaitStatus(unix.SIGKILL), OK: true}
		}, report.StatusSignaled, 137, "SIGKILL", ""},
		{"cancelled before start", func(f *runFacts) {
			f.end, f.sigs = ending{}, signalFacts{Cancelled: true, CancelSig: syscall.SIGINT}
		}, report.StatusCancelled, 130, "", ""},
		{"cancelled during post-run", func(f *runFacts) {
			f.sigs = signalFacts{Cancelled: true, CancelSig: syscall.SIGTERM, PostRunCancelled: true}
		}, report.StatusCancelled, 143, "", ""},
		{"outputs over budget", func(f *runFacts) {
			f.out.over = &jail.OverBudget{Budget: "entries", Limit: "1", Path: "b", Size: 0}
		}, report.StatusOutputLimit, report.ExitOutputLimit, "", ""},
		{"not delivered", func(f *runFacts) { f.out.deliveryErrs = []string{"collect: no room"} }, report.StatusDeliveryFailed, report.ExitDeliveryFailed, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := testFacts(t)
			c.change(&f)
			r := assembleReport(f)
			var stage jail.Stage
			if r.SetupError != nil {
				stage = r.SetupError.Stage
			}
			if r.Status != c.status || r.ExitCode != c.code || r.Signal != c.signal || stage != c.stage {
				t.Errorf("assembleReport = %s, %d, %q, stage %q; want %s, %d, %q, stage %q",
					r.Status, r.ExitCode, r.Signal, stage, c.status, c.code, c.signal, c.stage)
			}
			if c.status == report.StatusDeliveryFailed && (r.AnalysisStatus != report.StatusOK || !slices.Equal(r.DeliveryErrors, f.out.deliveryErrs)) {
				t.Errorf("delivery failure: analysis %q, errors %q, want ok and %q", r.AnalysisStatus, r.DeliveryErrors, f.out.deliveryErrs)
			}
		})
	}
}
