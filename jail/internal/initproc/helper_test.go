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
	// A server started with no_new_privs and a filter of its own (a
	// systemd unit's NoNewPrivileges=, SystemCallFilter=): every thread
	// of its inits has them.
	served := func(status string) string {
		for _, kv := range [][2]string{{"NoNewPrivs", "1"}, {"Seccomp", "2"}, {"Seccomp_filters", "1"}} {
			var out []string
			for _, l := range strings.Split(status, "\n") {
				if strings.HasPrefix(l, kv[0]+":") {
					l = kv[0] + ":\t" + kv[1]
				}
				out = append(out, l)
			}
			status = strings.Join(out, "\n")
		}
		return status
	}
	tests := []struct {
		name   string
		status string
		base   string // the main thread's before its confinement
		want   string // substring of the error; "": nil
	}{
		{"the helper", helperStatus, helperStatus, ""},
		{"the helper, no_new_privs and a filter inherited", served(helperStatus), served(helperStatus), ""},
		{"a thread of the confined one", status, helperStatus, "CapEff"},
		{"no CAP_SYS_ADMIN", with("CapEff", "00000000000015c0"), helperStatus, "CapEff"},
		{"effective short of permitted", with("CapEff", "0000000000200000"), helperStatus, "CapPrm"},
		{"no_new_privs the main thread had not", with("NoNewPrivs", "1"), helperStatus, "NoNewPrivs"},
		{"a filter the main thread had not", with("Seccomp", "2"), helperStatus, "Seccomp"},
		{"one filter more than the main thread", strings.Replace(served(helperStatus), "Seccomp_filters:\t1", "Seccomp_filters:\t2", 1), served(helperStatus), "Seccomp_filters"},
		{"another uid", with("Uid", "0\t0\t0\t0"), helperStatus, "Uid"},
		{"no seccomp line", with("Seccomp", ""), helperStatus, "Seccomp"},
		{"no capability lines", "Name:\tx\n", helperStatus, "CapEff"},
	}
	for _, tt := range tests {
		err := checkUnconfined([]byte(tt.status), []byte(tt.base))
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
	base, err := threadStatus()
	if err != nil {
		t.Fatal(err)
	}
	if err := unconfined(base); err != nil {
		t.Fatalf("before the confinement: unconfined() = %v, want nil", err)
	}
	if err := dropIdentity(1000, 1000, true); err != nil {
		t.Fatalf("dropIdentity: %v", err)
	}
	if err := applySeccomp(&seccomp.Policy{Name: "default", Net: "none"}); err != nil {
		t.Fatalf("applySeccomp: %v", err)
	}
	if err := unconfined(base); err == nil {
		t.Fatal("on the confined thread: unconfined() = nil, want an error")
	}
	// More helpers than the runtime keeps idle threads: some threads are
	// made while only this confined, locked thread asks for them.
	for i := range 8 {
		if _, err := startHelper(base); err != nil {
			t.Fatalf("helper %d started from the confined thread: %v", i, err)
		}
	}
}
