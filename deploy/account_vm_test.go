package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// accountScript is what a real account's runner does in its delegated
// cgroup, after packaging/delegate laid it out: say which groups it holds,
// then one run that ends well and one that hits each limit, with the CLI,
// and one run through the Python API (scidex_jail.run).
const accountScript = `set -u
J=$BIN/scidex-jail
P=$SCIDEX_JAIL_CGROUP_PARENT
id -G >"$W/groups.txt"
$J run --id acct-ok --cgroup-parent "$P" --tmp-root "$T" --report "$W/ok.json" --memory 128M --cpus 0.5 --pids 32 -- \
	/usr/bin/python3 -c 'import os; open("result.txt", "w").write("groups %s\n" % os.getgroups())' 2>"$W/ok.err"; echo "ok $?"
$J run --id acct-oom --cgroup-parent "$P" --tmp-root "$T" --report "$W/oom.json" --memory 64M --grace 1s -- \
	/usr/bin/python3 -c 'b = [bytearray(8 << 20) for _ in range(1000)]' 2>"$W/oom.err"; echo "oom $?"
$J run --id acct-fork --cgroup-parent "$P" --tmp-root "$T" --report "$W/fork.json" --pids 16 --grace 1s -- \
	/bin/sh -c 'i=0; while [ $i -lt 64 ]; do sleep 3 & i=$((i+1)); done; wait' 2>"$W/fork.err"; echo "fork $?"
PYTHONPATH=$W/site /usr/bin/python3 -c '
import json, os, scidex_jail
r = scidex_jail.run(["/usr/bin/python3", "-c", "open(\"py.txt\", \"w\").write(\"from python\")"],
    analysis_id="acct-py", binary=os.environ["BIN"] + "/scidex-jail", memory="128M",
    cgroup_parent=os.environ["SCIDEX_JAIL_CGROUP_PARENT"], tmp_root=os.environ["T"])
json.dump(r.report.raw, open(os.environ["W"] + "/py.json", "w"))
' 2>"$W/py.err"; echo "py $?"
`

// systemdSlice makes the cgroups of the package's slice as systemd names
// and fills them (a dash in a slice's name is a level: scidex-jail.slice
// is scidex.slice/scidex-jail.slice), each handing memory, cpu and pids
// down, as systemd does for a delegated unit below it. Removed at cleanup.
func systemdSlice(t *testing.T, mount string) string {
	t.Helper()
	top := filepath.Join(mount, "scidex.slice")
	slice := filepath.Join(top, "scidex-jail.slice")
	if err := os.Mkdir(top, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroupTree(t, top) })
	if err := os.Mkdir(slice, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{top, slice} {
		if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+memory +cpu +pids"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return slice
}

// TestVMRealAccount: an account made with useradd, in two supplementary
// groups, runs the jail rootless from the cgroup a systemd service with
// User= that account, Delegate=yes and Slice=scidex-jail.slice would have,
// entered as systemd enters it (setpriv --init-groups) and laid out by
// packaging/delegate; and, entered with su, the issue's own command (no
// cgroup of its own: --unsafe-disable cgroup). The jail keeps the
// account's groups (the kernel will not let it drop them) and names them
// in the report; a normal run, with the CLI and through scidex_jail.run,
// is ok and its output listed; the memory and PID limits kill what
// exceeds them; afterwards no leaf, no run directory and no process of
// the account is left.
func TestVMRealAccount(t *testing.T) {
	mount := cgroup2Root(t)
	requireVM(t, "adds an account and groups")
	a := newAccount(t, "scidexvm", "users", "scidexlab")
	slice := systemdSlice(t, mount)
	svc := filepath.Join(slice, "scidex-vm-account.service")
	delegate(t, svc, a.UID)

	bin := sharedDir(t, "scidex-acct-bin-")
	copyExecutable(t, jailBin, bin)
	copyExecutable(t, testutil.InitBeside(jailBin), bin)
	copyExecutable(t, delegateHelper(t), bin)
	w := sharedDir(t, "scidex-acct-work-")
	tmpRoot := filepath.Join(w, "runs")
	if err := os.Mkdir(tmpRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{w, tmpRoot} {
		if err := os.Chown(d, a.UID, a.GID); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(w, "runner.sh"), accountScript, 0o644)
	copyTree(t, pythonPackage(), filepath.Join(w, "site", "scidex_jail"))

	out, errOut, code := asAccountIn(t, a, svc, `exec "$BIN/delegate" /bin/sh "$W/runner.sh"`,
		"BIN="+bin, "W="+w, "T="+tmpRoot)
	if code != 0 {
		t.Fatalf("runner as %s: exit %d; stdout:\n%s\nstderr:\n%s", a.Name, code, out, errOut)
	}
	results := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			results[k] = v
		}
	}
	for k, v := range map[string]string{"ok": "0", "oom": "137", "py": "0"} {
		if results[k] != v {
			errs, _ := os.ReadFile(filepath.Join(w, k+".err"))
			t.Errorf("run %s as %s exited %q, want %s; stderr:\n%s", k, a.Name, results[k], v, errs)
		}
	}
	idG, err := os.ReadFile(filepath.Join(w, "groups.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkGroupsHeld(t, a, string(idG))

	jails := filepath.Join(svc, "jails")
	for _, tc := range []struct {
		id     string
		status report.Status
		files  map[string]string
	}{
		{"ok", report.StatusOK, map[string]string{"memory.max": "134217728", "cpu.max": "50000 100000", "pids.max": "32"}},
		{"oom", report.StatusOOMKilled, map[string]string{"memory.max": "67108864"}},
		{"fork", report.StatusPIDsLimit, map[string]string{"pids.max": "16"}},
		{"py", report.StatusOK, map[string]string{"memory.max": "134217728"}},
	} {
		path := filepath.Join(w, tc.id+".json")
		r := readReport(t, path)
		if r == nil {
			continue
		}
		if r.Status != tc.status {
			t.Errorf("run %s as %s: status %s (%s), want %s", tc.id, a.Name, r.Status, r.CompletionNotes, tc.status)
		}
		if r.Enforced.HostUID != a.UID {
			t.Errorf("run %s: enforced.host_uid = %d, want the account's %d", tc.id, r.Enforced.HostUID, a.UID)
		}
		checkGroupsReported(t, a, r)
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
		if want, ok := map[string]string{"ok": "result.txt", "py": "py.txt"}[tc.id]; ok {
			var names []string
			for _, o := range r.Outputs {
				names = append(names, o.Path)
			}
			if !slices.Equal(names, []string{want}) {
				t.Errorf("run %s: outputs %v, want [%s]", tc.id, names, want)
			}
		}
	}

	// The command, through su, from a cgroup the account does not own.
	out, errOut, code = su(t, a, `"$BIN/scidex-jail" run --id acct-su --tmp-root "$T" --report "$W/su.json" --unsafe-disable cgroup -- /usr/bin/id`,
		"BIN="+bin, "W="+w, "T="+tmpRoot)
	r := readReport(t, filepath.Join(w, "su.json"))
	if code != 0 || r == nil || r.Status != report.StatusOK {
		t.Errorf("su %s -c 'scidex-jail run ... --unsafe-disable cgroup -- /usr/bin/id': exit %d, want 0 and status ok; stdout:\n%s\nstderr:\n%s", a.Name, code, out, errOut)
	}
	if r != nil {
		checkGroupsReported(t, a, r)
	}

	// Nothing left: no leaf, no run directory, no process of the account.
	if left := cgroupDirs(jails); len(left) > 0 {
		t.Errorf("leaves left below %s: %v", jails, left)
	}
	if ents, err := os.ReadDir(tmpRoot); err != nil || len(ents) > 0 {
		t.Errorf("tmp-root %s after the runs: %v, %v; want it empty", tmpRoot, ents, err)
	}
	if ps := processesOf(a.UID); len(ps) > 0 {
		t.Errorf("processes of %s left: %v", a.Name, ps)
	}
}
