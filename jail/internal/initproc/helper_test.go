package initproc

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/seccomp"
)

// helperStatus is a /proc/<tid>/status of the init's helper thread as a
// slot's init has it: the analysis' uid with the capabilities its spawn
// gave it (CAP_SYS_ADMIN among them), no no_new_privs, no filter.
const helperStatus = `Name:	sj-slot
Uid:	1000	1000	1000	1000
Gid:	1000	1000	1000	1000
CapInh:	00000000002015c0
CapPrm:	00000000002015c0
CapEff:	00000000002015c0
CapBnd:	000001ffffffffff
CapAmb:	00000000002015c0
NoNewPrivs:	0
Seccomp:	0
Seccomp_filters:	0
`

func TestCheckUnconfined(t *testing.T) {
	with := func(key, val string) string {
		var out []string
		for _, l := range strings.Split(helperStatus, "\n") {
			if strings.HasPrefix(l, key+":") {
				l = key + ":\t" + val
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n")
	}
	tests := []struct {
		name   string
		status string
		want   string // substring of the error; "": nil
	}{
		{"the helper", helperStatus, ""},
		{"a thread of the confined one", status, "CapEff"},
		{"no CAP_SYS_ADMIN", with("CapEff", "00000000000015c0"), "CapEff"},
		{"effective short of permitted", with("CapEff", "0000000000200000"), "CapPrm"},
		{"no_new_privs", with("NoNewPrivs", "1"), "NoNewPrivs"},
		{"a filter", with("Seccomp", "2"), "Seccomp"},
		{"no seccomp line", with("Seccomp", ""), "Seccomp"},
		{"no capability lines", "Name:\tx\n", "CapEff"},
	}
	for _, tt := range tests {
		err := checkUnconfined([]byte(tt.status))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: checkUnconfined = %v, want nil", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: checkUnconfined = %v, want an error naming %s", tt.name, err, tt.want)
		}
	}
}

// helperChildEnv marks the test binary's child run of TestHelperUnconfined.
const helperChildEnv = "SCIDEX_INITPROC_HELPER_CHILD"

// TestHelperUnconfined: a thread confined as a slot's init confines its
// main thread (identity dropped, seccomp loaded, locked) starts helpers
// whose threads are not confined: the Go runtime makes a thread asked for
// from a locked one through its template thread, never by cloning the
// locked one (helper.go), and unconfined sees it. The confined thread
// itself fails the check. The confinement cannot be undone: it runs in a
// child process, as root.
func TestHelperUnconfined(t *testing.T) {
	if os.Getenv(helperChildEnv) == "" {
		if testing.Short() {
			// make unit (-short, as nobody) runs the tests that need no
			// root; make test-host runs this one, as root, where a skip
			// is a failure.
			t.Skip("needs root to drop a thread's identity: run without -short, as root")
		}
		if os.Geteuid() != 0 {
			t.Fatalf("TestHelperUnconfined drops a thread's identity: it needs root (euid %d)", os.Geteuid())
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUnconfined$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), helperChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestHelperUnconfined ") {
			t.Fatalf("child run: %v, output:\n%s", err, out)
		}
		return
	}
	runtime.LockOSThread() // for good: the thread is confined below
	if err := unconfined(); err != nil {
		t.Fatalf("before the confinement: unconfined() = %v, want nil", err)
	}
	if err := dropIdentity(1000, 1000, true); err != nil {
		t.Fatalf("dropIdentity: %v", err)
	}
	if err := applySeccomp(&seccomp.Policy{Name: "default", Net: "none"}); err != nil {
		t.Fatalf("applySeccomp: %v", err)
	}
	if err := unconfined(); err == nil {
		t.Fatal("on the confined thread: unconfined() = nil, want an error")
	}
	// More helpers than the runtime keeps idle threads: some threads are
	// made while only this confined, locked thread asks for them.
	for i := range 8 {
		if _, err := startHelper(); err != nil {
			t.Fatalf("helper %d started from the confined thread: %v", i, err)
		}
	}
}
