package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/landlock"
)

// The contract is held per promise (promise.EvaluatePromises): these tests run
// the same checks on this host (Landlock ABI 7) and, from .ci/vmtests, in
// the QEMU VM on Debian's 6.1 kernel (ABI 2) and on that kernel booted
// without Landlock. The expected layers are written out per kernel here, not
// computed by the code under test.

// promiseExpectABIBelow makes the VM script's intent checkable: when it
// says the kernel must be old (SCIDEX_EXPECT_LANDLOCK_ABI_BELOW=5), a kernel
// that is not fails the test instead of taking another branch unnoticed.
const promiseExpectABIBelow = "SCIDEX_EXPECT_LANDLOCK_ABI_BELOW"

// promiseExpectNoLandlock says the VM booted the kernel without Landlock.
const promiseExpectNoLandlock = "SCIDEX_EXPECT_NO_LANDLOCK"

// kernelLandlockABI is the ABI of the kernel the test runs on, checked
// against what the VM script says it booted.
func kernelLandlockABI(t *testing.T) int {
	t.Helper()
	abi, err := landlock.ProbeABI()
	t.Logf("kernel %s, Landlock ABI %d (%v), in VM: %q", kernelRelease(t), abi, err, os.Getenv("SCIDEX_IN_VM"))
	if os.Getenv(promiseExpectNoLandlock) != "" && abi != 0 {
		t.Fatalf("%s is set but the kernel offers Landlock ABI %d: not the kernel this run is for", promiseExpectNoLandlock, abi)
	}
	if v := os.Getenv(promiseExpectABIBelow); v != "" {
		if below, err := strconv.Atoi(v); err != nil || abi >= below || abi == 0 {
			t.Fatalf("%s=%s but the kernel's Landlock ABI is %d: not the old kernel this run is for", promiseExpectABIBelow, v, abi)
		}
	}
	if abi == 0 && os.Getenv(promiseExpectNoLandlock) == "" {
		t.Fatalf("landlock.ProbeABI() = 0, %v: this machine has no Landlock, and nothing said it would not", err)
	}
	return abi
}

func kernelRelease(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// wantPromises is what a default-profile run (net none) must report per
// promise on a kernel with the given Landlock ABI, written out by hand.
func wantPromises(abi int) map[promise.Promise][]promise.Layer {
	mv, llfs, pidns, netns, sc, cg := promise.LayerMountView, promise.LayerLandlockFS, promise.LayerPIDNS, promise.LayerNetNS, promise.LayerSeccomp, promise.LayerCgroup
	w := map[promise.Promise][]promise.Layer{
		promise.PromiseFSWrite:         {mv, llfs},
		promise.PromiseFSRead:          {mv, llfs},
		promise.PromiseSignalsOut:      {pidns, promise.LayerLandlockScope},
		promise.PromisePtraceOut:       {pidns, sc},
		promise.PromiseAbstractSockets: {netns, promise.LayerLandlockScope},
		promise.PromiseUnixSockets:     {mv},
		promise.PromiseNoPostgres:      {netns, sc},
		promise.PromiseNetwork:         {netns, sc},
		promise.PromiseKernelSurface:   {sc},
		promise.PromiseLimits:          {cg},
		promise.PromiseNothingLeft:     {pidns, cg},
	}
	switch {
	case abi >= 9:
		w[promise.PromiseUnixSockets] = []promise.Layer{mv, promise.LayerLandlockUnix}
	case abi >= 6:
	case abi >= 1:
		w[promise.PromiseSignalsOut] = []promise.Layer{pidns}
		w[promise.PromiseAbstractSockets] = []promise.Layer{netns}
	default:
		w[promise.PromiseFSWrite], w[promise.PromiseFSRead] = []promise.Layer{mv}, []promise.Layer{mv}
		w[promise.PromiseSignalsOut] = []promise.Layer{pidns}
		w[promise.PromiseAbstractSockets] = []promise.Layer{netns}
	}
	return w
}

func checkPromiseReport(t *testing.T, r result, abi int) {
	t.Helper()
	got, want := r.report.Enforced.Promises, wantPromises(abi)
	if len(got) != len(want) {
		t.Errorf("report enforced.promises has %d promises, want %d: %v", len(got), len(want), got)
	}
	for p, w := range want {
		if !slices.Equal(got[p], w) {
			t.Errorf("report enforced.promises[%s] = %q, want %q on Landlock ABI %d", p, got[p], w, abi)
		}
	}
}

// TestPromisesDefaultProfile: the default profile runs with no flag on
// every kernel with Landlock, and the report says, promise by promise,
// which layers held it; nothing is degraded. Without Landlock the run is
// refused, naming the promise and the opt-in, and runs with the opt-in,
// listing the filesystem promises as degraded.
func TestPromisesDefaultProfile(t *testing.T) {
	requireRoot(t)
	abi := kernelLandlockABI(t)
	root := tmpRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "promises", "--tmp-root", root, "--", "/bin/true")
	if abi == 0 {
		wantStatus(t, r, report.StatusSetupError, 125)
		se := r.report.SetupError
		for _, want := range []string{"promise fs_write", "mount view", "missing landlock fs", "--allow-degraded landlock"} {
			if se == nil || !strings.Contains(se.Message, want) {
				t.Errorf("setup error = %+v, want its message to say %q", se, want)
			}
		}
		if se != nil && se.Stage != "promises" {
			t.Errorf("setup error stage = %q, want promises", se.Stage)
		}
		if !strings.Contains(r.stderr, "promise fs_write") {
			t.Errorf("stderr %q does not name the promise", r.stderr)
		}
		r = runJail(t, runOpts{}, "run", "--id", "promises", "--tmp-root", root, "--allow-degraded", "landlock", "--", "/bin/true")
		wantStatus(t, r, report.StatusOK, 0)
		checkPromiseReport(t, r, abi)
		deg := strings.Join(r.report.Enforced.Degraded, "\n")
		for _, p := range []string{"fs_write", "fs_read"} {
			if !strings.Contains(deg, p+" (") || !strings.Contains(deg, "allowed by --allow-degraded landlock") {
				t.Errorf("enforced.degraded = %q, want %s listed as allowed by --allow-degraded landlock", r.report.Enforced.Degraded, p)
			}
		}
		if len(r.report.Enforced.Degraded) != 2 {
			t.Errorf("enforced.degraded = %q, want exactly the two filesystem promises", r.report.Enforced.Degraded)
		}
		return
	}
	wantStatus(t, r, report.StatusOK, 0)
	checkPromiseReport(t, r, abi)
	if d := r.report.Enforced.Degraded; len(d) != 0 {
		t.Errorf("enforced.degraded = %q, want none: every promise holds with its required layers on ABI %d", d, abi)
	}
	ll := r.report.Enforced.Landlock
	if ll == nil || ll.ABI != abi || ll.Required != 6 {
		t.Fatalf("enforced.landlock = %+v, want ABI %d, required 6", ll, abi)
	}
	// Landlock's own list says what Landlock does not do here, and only that.
	for _, f := range []struct {
		name string
		abi  int
	}{{"fs.truncate", 3}, {"fs.ioctl_dev", 5}, {"scope.signal", 6}, {"scope.abstract_unix_socket", 6}} {
		listed := slices.ContainsFunc(ll.Degraded, func(d string) bool { return strings.HasPrefix(d, f.name+" ") })
		if listed != (abi < f.abi) {
			t.Errorf("enforced.landlock.degraded lists %s = %v, want %v on ABI %d: %q", f.name, listed, abi < f.abi, abi, ll.Degraded)
		}
	}
	for _, d := range ll.Degraded {
		if !strings.Contains(d, "Landlock does not") && !strings.Contains(d, "Landlock cannot") {
			t.Errorf("enforced.landlock.degraded entry %q does not speak of Landlock alone", d)
		}
	}
}

// TestPromisesProfileRequiresMore: a profile asking for Landlock scoping on
// top of the pid namespace runs where the kernel has it (ABI 6) and is
// refused below, naming the promise and the kernel that brings it.
func TestPromisesProfileRequiresMore(t *testing.T) {
	requireRoot(t)
	abi := kernelLandlockABI(t)
	root := tmpRoot(t)
	// A lower count than the default is not a way around the contract.
	bad := writeProfiles(t, root, `{"profiles": {"lax": {"require_layers": {"fs_write": 1}}}}`)
	r := runJail(t, runOpts{}, "run", "--id", "lax", "--config", bad, "--profile", "lax", "--tmp-root", root, "--", "/bin/true")
	if r.code != 125 || !strings.Contains(r.stderr, "below the default of 2") {
		t.Errorf("require_layers fs_write 1: exit %d, stderr %q; want 125 saying it is below the default", r.code, r.stderr)
	}

	cfg := writeProfiles(t, root, `{"profiles": {"strict": {"require_layers": {"signals_out": 2, "abstract_sockets_out": 2}}}}`)
	r = runJail(t, runOpts{}, "run", "--id", "strict", "--config", cfg, "--profile", "strict", "--tmp-root", root, "--", "/bin/true")
	if abi >= 6 {
		wantStatus(t, r, report.StatusOK, 0)
		return
	}
	wantStatus(t, r, report.StatusSetupError, 125)
	if se := r.report.SetupError; se == nil || !strings.Contains(se.Message, "promise signals_out") || !strings.Contains(se.Message, "2 required") {
		t.Errorf("setup error = %+v, want it to name promise signals_out and 2 required", se)
	}
}

// TestPromisesCheck: check prints one line per promise with the layers
// that hold it on this kernel, the same table a run decides on.
func TestPromisesCheck(t *testing.T) {
	requireRoot(t)
	abi := kernelLandlockABI(t)
	r := runJail(t, runOpts{}, "check", "--profile", "default", "--tmp-root", tmpRoot(t))
	got := parseCheck(t, r.stdout)
	for p, layers := range wantPromises(abi) {
		c, ok := got["promise "+string(p)]
		if !ok {
			t.Errorf("check has no line for promise %s; %v", p, r)
			continue
		}
		names := make([]string, len(layers))
		for i, l := range layers {
			names[i] = string(l)
		}
		if want := fmt.Sprintf("holds with %d layer(s) (%s)", len(layers), strings.Join(names, ", ")); !strings.Contains(c.text, want) {
			t.Errorf("check promise %s = %q, want it to say %q", p, c.text, want)
		}
		wantState := "OK"
		if abi == 0 && (p == promise.PromiseFSWrite || p == promise.PromiseFSRead) {
			wantState = "MISSING"
		}
		if c.state != wantState {
			t.Errorf("check promise %s = %s, want %s on Landlock ABI %d; %q", p, c.state, wantState, abi, c.text)
		}
	}
	wantCode := 0
	if abi == 0 {
		wantCode = 1
		if fix := got["promise fs_write"].fix; !strings.Contains(fix, "--allow-degraded landlock") {
			t.Errorf("check promise fs_write fix = %q, want it to name --allow-degraded landlock", fix)
		}
	}
	if r.code != wantCode {
		t.Errorf("check exit = %d, want %d on Landlock ABI %d; %v", r.code, wantCode, abi, r)
	}
}

// netModeRefusedHere: host mode shares the host's network namespace, so
// only Landlock holds its network promises (TCP rules, ABI 4; scoping of the
// host's abstract sockets, ABI 6). On a kernel without them a host-mode run
// must be refused before it starts, naming the promise; the caller's
// subtest then has nothing more to try. False, having run nothing, where
// the kernel has them.
func netModeRefusedHere(t *testing.T, m netMode) bool {
	t.Helper()
	abi, _ := landlock.ProbeABI()
	if m.name != "host" || abi >= 6 {
		return false
	}
	r := runJail(t, runOpts{}, append(append([]string{"run", "--id", "host-refused", "--tmp-root", tmpRoot(t)}, m.args...), "--", "/bin/true")...)
	wantStatus(t, r, report.StatusSetupError, 125)
	if se := r.report.SetupError; se == nil || !strings.Contains(se.Message, "promise abstract_sockets_out") || !strings.Contains(se.Message, "--allow-degraded landlock") {
		t.Errorf("net host on Landlock ABI %d: setup error = %+v, want the promise abstract_sockets_out and the opt-in named", abi, se)
	}
	return true
}

// writeProfiles writes a profiles file into dir and returns its path.
func writeProfiles(t *testing.T, dir, body string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "profiles-*.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(body); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
