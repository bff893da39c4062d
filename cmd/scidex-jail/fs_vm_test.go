package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/landlock"
)

// fsLandlockFeatures are what the default run's Landlock policy needs
// beyond ABI 2 (filesystem rules with refer), by the ABI that brings them:
// what a run on an older kernel loses when degrading is allowed.
var fsLandlockFeatures = []struct {
	name string
	abi  int
}{
	{"fs.truncate", 3},
	{"fs.ioctl_dev", 5},
	{"scope.signal", 6},
	{"scope.abstract_unix_socket", 6},
}

// fsExpectABIBelow makes the VM script's intent checkable: when it says the
// kernel must be old (SCIDEX_EXPECT_LANDLOCK_ABI_BELOW=5), a kernel that is
// not fails the test instead of taking the new-kernel branch unnoticed.
const fsExpectABIBelow = "SCIDEX_EXPECT_LANDLOCK_ABI_BELOW"

// TestFSOldKernelInVM checks that Landlock fails closed. The run's policy
// needs ABI 6 (truncate, device ioctl, signal and abstract-socket scoping);
// on a kernel below that (Debian's 6.1: ABI 2, run by .ci/vmtests-fs in the
// QEMU harness) the run is refused with exit 125, naming the ABI found and
// needed, and only --allow-degraded landlock runs it, listing what was lost.
// On a kernel with ABI 6 or later (this host: 7) the same run is enforced
// in full and nothing is degraded.
func TestFSOldKernelInVM(t *testing.T) {
	requireRoot(t)
	abi, err := landlock.ProbeABI()
	if err != nil && abi == 0 {
		t.Fatalf("landlock.ProbeABI() = %d, %v: this test needs a kernel with Landlock", abi, err)
	}
	t.Logf("kernel %s, Landlock ABI %d, in VM: %q", fsKernelRelease(t), abi, os.Getenv("SCIDEX_IN_VM"))
	if v := os.Getenv(fsExpectABIBelow); v != "" {
		if below, err := strconv.Atoi(v); err != nil || abi >= below {
			t.Fatalf("%s=%s but the kernel's Landlock ABI is %d: not the old kernel this run is for", fsExpectABIBelow, v, abi)
		}
	}
	root := tmpRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "fsabi", "--tmp-root", root, "--", "/bin/true")
	const needed = 6
	if abi >= needed {
		wantStatus(t, r, jail.StatusOK, 0)
		ll := r.report.Enforced.Landlock
		if ll == nil || ll.ABI != abi || ll.Required != needed || len(ll.Degraded) != 0 {
			t.Errorf("report enforced.landlock = %+v, want ABI %d, required %d, nothing degraded", ll, abi, needed)
		}
		if d := r.report.Enforced.Degraded; len(d) != 0 {
			t.Errorf("report enforced.degraded = %q, want empty on ABI %d", d, abi)
		}
		return
	}

	// Refused: nothing ran, and the message says what is missing.
	wantStatus(t, r, jail.StatusSetupError, 125)
	msg := r.report.SetupError.Message
	t.Logf("refused: %s", msg)
	for _, want := range []string{fmt.Sprintf("ABI %d", abi), fmt.Sprintf("needs ABI %d", needed)} {
		if !strings.Contains(msg, want) {
			t.Errorf("setup error message %q does not say %q", msg, want)
		}
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("ABI %d", abi)) {
		t.Errorf("stderr %q does not name the kernel's Landlock ABI %d", r.stderr, abi)
	}
	// The opt-in must be named as the user types it, not as a Go field.
	if !strings.Contains(msg, "--allow-degraded landlock") {
		t.Errorf("setup error message %q does not name the opt-in --allow-degraded landlock", msg)
	}

	// Degrading is an explicit opt-in, and the report says what was lost.
	r = runJail(t, runOpts{}, "run", "--id", "fsabi", "--tmp-root", root, "--allow-degraded", "landlock", "--", "/bin/true")
	wantStatus(t, r, jail.StatusOK, 0)
	deg := strings.Join(r.report.Enforced.Degraded, "\n")
	t.Logf("degraded:\n%s", deg)
	for _, f := range fsLandlockFeatures {
		lost := strings.Contains(deg, "landlock: "+f.name+" ")
		if lost != (abi < f.abi) {
			t.Errorf("report enforced.degraded lists %s = %v, want %v on ABI %d (it needs %d); degraded:\n%s", f.name, lost, abi < f.abi, abi, f.abi, deg)
		}
	}
	if ll := r.report.Enforced.Landlock; ll == nil || ll.ABI != abi || len(ll.Degraded) == 0 {
		t.Errorf("report enforced.landlock = %+v, want ABI %d with its degraded list", ll, abi)
	}
}

func fsKernelRelease(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
