package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// runnerUID is the service user of the delegated-subtree test.
const runnerUID = 4711

// runnerScript is what the example service's runner does, as runnerUID in
// its delegated cgroup after packaging/delegate laid it out: check, then
// runs that hit each limit, then attempts to leave the subtree.
const runnerScript = `set -u
J=$BIN/scidex-jail
P=$SCIDEX_JAIL_CGROUP_PARENT
$J check --cgroup-parent "$P" --tmp-root "$W" >"$W/check-jails.txt" 2>&1; echo "check-jails $?"
$J check --tmp-root "$W" >"$W/check-own.txt" 2>&1; echo "check-own $?"
$J run --id oom --cgroup-parent "$P" --tmp-root "$W" --report "$W/oom.json" --memory 64M --grace 1s -- \
	/usr/bin/python3 -c 'b = [bytearray(8 << 20) for _ in range(1000)]' 2>/dev/null; echo "oom $?"
$J run --id fork --cgroup-parent "$P" --tmp-root "$W" --report "$W/fork.json" --pids 16 --grace 1s -- \
	/bin/sh -c 'i=0; while [ $i -lt 64 ]; do sleep 3 & i=$((i+1)); done; wait' 2>/dev/null; echo "fork $?"
$J run --id ok --cgroup-parent "$P" --tmp-root "$W" --report "$W/ok.json" --memory 128M --cpus 0.5 --pids 32 -- \
	/bin/cat /proc/self/cgroup 2>/dev/null; echo "ok $?"
$J run --id escape --cgroup-parent "$SLICE" --tmp-root "$W" -- /bin/true 2>"$W/escape.err"; echo "escape $?"
echo $$ 2>/dev/null >"$ROOT/cgroup.procs" && echo "moved-to-root" || echo "move-to-root-refused"
mkdir "$SLICE/outside" 2>/dev/null && echo "mkdir-outside" || echo "mkdir-outside-refused"
`

// TestVMDelegatedUser: the systemd layout of a non-root runner (the
// example service: Slice=scidex-jail.slice, Delegate=yes, ExecStart through
// the delegate helper), built by hand as systemd would. The runner, uid
// 4711, owns only its service's cgroup; there the jail enforces every limit
// (an OOM kill, the PID limit, cpu.max), check says all is in place, and
// neither the jail nor the runner can make or move anything outside the
// subtree. check names the missing piece when the runner's own cgroup is
// used, and when a user namespace sysctl is off.
func TestVMDelegatedUser(t *testing.T) {
	mount := cgroup2Root(t)
	before := cgroupDirs(mount)
	slice := filepath.Join(mount, "scidex-jail.slice")
	if err := os.Mkdir(slice, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroupTree(t, slice) })
	if err := os.WriteFile(filepath.Join(slice, "cgroup.subtree_control"), []byte("+memory +cpu +pids"), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := filepath.Join(slice, "scidex-test-runner.service")
	delegate(t, svc, runnerUID)

	bin := sharedDir(t, "scidex-deleg-bin-")
	copyExecutable(t, jailBin, bin)
	copyExecutable(t, testutil.InitBeside(jailBin), bin)
	copyExecutable(t, delegateHelper(t), bin)
	w := sharedDir(t, "scidex-deleg-work-")
	if err := os.Chown(w, runnerUID, runnerUID); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w, "runner.sh"), runnerScript, 0o644)

	out, errOut, code := asUserIn(t, runnerUID, svc, `exec "$BIN/delegate" /bin/sh "$W/runner.sh"`,
		"BIN="+bin, "W="+w, "SLICE="+slice, "ROOT="+mount)
	if code != 0 {
		t.Fatalf("runner exit %d; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	results := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			results[k] = v
		} else {
			results[l] = ""
		}
	}
	jails := filepath.Join(svc, "jails")
	want := map[string]string{"check-jails": "0", "check-own": "1", "oom": "137", "escape": "125"}
	for k, v := range want {
		if results[k] != v {
			t.Errorf("runner: %s exited %q, want %s; stdout:\n%s", k, results[k], v, out)
		}
	}
	for _, k := range []string{"move-to-root-refused", "mkdir-outside-refused"} {
		if _, ok := results[k]; !ok {
			t.Errorf("runner: want %s; stdout:\n%s", k, out)
		}
	}

	checkJails, _ := os.ReadFile(filepath.Join(w, "check-jails.txt"))
	for name, l := range checkLines(string(checkJails)) {
		if l[0] != "OK" {
			t.Errorf("check --cgroup-parent %s: %s = %s (%s), want OK", jails, name, l[0], l[1])
		}
	}
	if l := checkLines(string(checkJails))["cgroup delegation"]; !strings.Contains(l[1], "writable by uid 4711 (--cgroup-parent), inside scidex-jail.slice") {
		t.Errorf("check cgroup delegation = %q, want the delegated parent in the slice", l[1])
	}
	checkOwn, _ := os.ReadFile(filepath.Join(w, "check-own.txt"))
	if l := checkLines(string(checkOwn))["cgroup delegation"]; l[0] != "MISSING" || !strings.Contains(l[1], "holds other processes") {
		t.Errorf("check from the runner's own cgroup: cgroup delegation = %v, want MISSING naming the other processes:\n%s", l, checkOwn)
	}

	for _, tc := range []struct {
		id     string
		status report.Status
		files  map[string]string
	}{
		{"oom", report.StatusOOMKilled, map[string]string{"memory.max": "67108864"}},
		{"fork", report.StatusPIDsLimit, map[string]string{"pids.max": "16"}},
		{"ok", report.StatusOK, map[string]string{"memory.max": "134217728", "cpu.max": "50000 100000", "pids.max": "32"}},
	} {
		r := readReport(t, filepath.Join(w, tc.id+".json"))
		if r == nil {
			continue
		}
		if r.Status != tc.status {
			t.Errorf("run %s: status %s (%s), want %s", tc.id, r.Status, r.CompletionNotes, tc.status)
		}
		cg := r.Enforced.Cgroup
		if cg == nil || cg.Version != 2 || len(cg.Paths) != 1 || filepath.Dir(cg.Paths[0]) != jails {
			t.Errorf("run %s: enforced.cgroup = %+v, want one v2 leaf directly below %s", tc.id, cg, jails)
			continue
		}
		for file, v := range tc.files {
			if got := cg.Written[filepath.Join(cg.Paths[0], file)]; got != v {
				t.Errorf("run %s: written %s = %q, want %q", tc.id, file, got, v)
			}
		}
		for file := range cg.Written {
			if !strings.HasPrefix(file, svc+"/") {
				t.Errorf("run %s wrote %s, outside the delegated %s", tc.id, file, svc)
			}
		}
	}
	if !strings.Contains(out, "0::/\n") {
		t.Errorf("the analysis' /proc/self/cgroup lacks 0::/ (its leaf as the root of its cgroup namespace); stdout:\n%s", out)
	}
	esc, _ := os.ReadFile(filepath.Join(w, "escape.err"))
	if !strings.Contains(string(esc), "Delegate=yes") {
		t.Errorf("run with --cgroup-parent %s (not delegated): stderr %q, want the fix naming Delegate=yes", slice, esc)
	}
	if left := cgroupDirs(jails); len(left) > 0 {
		t.Errorf("leaves left below %s: %v", jails, left)
	}

	// check names the user namespace sysctl that is off.
	for _, sysctl := range []string{"user/max_user_namespaces", "kernel/unprivileged_userns_clone"} {
		t.Run(strings.ReplaceAll(sysctl, "/", "."), func(t *testing.T) {
			path := "/proc/sys/" + sysctl
			old, err := os.ReadFile(path)
			if err != nil {
				if sysctl == "kernel/unprivileged_userns_clone" && os.IsNotExist(err) {
					return // not a Debian kernel: the pure table test covers it
				}
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("0"), 0o644); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := os.WriteFile(path, old, 0o644); err != nil {
					t.Errorf("restore %s: %v", path, err)
				}
			}()
			out, _, code := asUserIn(t, runnerUID, filepath.Join(svc, "runner"), fmt.Sprintf(`"$BIN/scidex-jail" check --cgroup-parent %q --tmp-root "$W"`, jails), "BIN="+bin, "W="+w)
			lines := checkLines(out)
			name := strings.ReplaceAll(sysctl, "/", ".")
			if l := lines["userns sysctls"]; code != 1 || l[0] != "MISSING" || !strings.Contains(l[1], name+" = 0") {
				t.Errorf("check with %s = 0: exit %d, userns sysctls = %v; want exit 1, MISSING naming it:\n%s", name, code, l, out)
			}
			if l := lines["user namespaces"]; l[0] != "MISSING" {
				t.Errorf("check with %s = 0: user namespaces = %v, want MISSING", name, l)
			}
		})
	}

	// Nothing was made outside the slice, which the cleanup removes.
	for _, d := range cgroupDirs(mount) {
		if !slices.Contains(before, d) && d != slice && !strings.HasPrefix(d, slice+"/") {
			t.Errorf("cgroup %s made outside the delegated subtree", d)
		}
	}
}
