package deploy

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
)

// The platform's service, as it runs on a Debian machine: the package
// installed, the package's example unit with User= an account in
// supplementary groups, Delegate= and Slice=scidex-jail.slice, its
// ExecStart the delegate helper and a runner calling the Python API for one
// analysis. systemd itself (the machine's /lib/systemd/systemd) boots it,
// as the init of a container in the VM (a pid, mount, uts, ipc and cgroup
// namespace, as systemd-nspawn makes one): the VM's own init is the
// harness's.

// manDBAutoUpdate is the flag file of man-db's trigger.
const manDBAutoUpdate = "/var/lib/man-db/auto-update"

// serviceUnit is the example unit the package ships, as an administrator
// installs it.
const serviceUnit = "scidex-jail-runner.service"

// serviceDropIn is the administrator's drop-in for the example unit:
// the account, the runner (through the package's delegate helper, as the
// example has it), and, for the test, systemd exits when the service has
// run, with the runner's exit status (SuccessAction=/FailureAction=exit
// in a container hand it to the container's parent).
const serviceDropIn = `[Unit]
SuccessAction=exit
FailureAction=exit

[Service]
User={{user}}
Group={{user}}
ExecStart=
ExecStart=/usr/libexec/scidex-jail/delegate /usr/bin/python3 {{w}}/runner.py {{w}}
Environment=PYTHONPATH={{w}}/site
Restart=no
StandardOutput=file:{{w}}/service.out
StandardError=file:{{w}}/service.err
`

// serviceRunner is the platform's runner: one analysis through
// scidex_jail.run, its outputs collected and its report written to the
// destination; then what is left of the run, as the service sees it.
const serviceRunner = `import json, os, sys

import scidex_jail

work = sys.argv[1]
dest = os.path.join(work, "out")
parent = os.environ["SCIDEX_JAIL_CGROUP_PARENT"]
r = scidex_jail.run(
    ["/usr/bin/python3", os.path.join(work, "analysis", "analysis.py")],
    analysis_id="svc-a1",
    ro=[os.path.join(work, "analysis")],
    cgroup_parent=parent,
    tmp_root="/run/scidex-jail",
    collect=os.path.join(dest, "svc-a1"),
    memory="256M",
    pids=64,
    stdout=scidex_jail.CAPTURE,
    stderr=scidex_jail.CAPTURE,
)
with open(os.path.join(dest, "svc-a1.report.json"), "w") as f:
    json.dump(r.report.raw, f)
own = open("/proc/self/cgroup").read().strip().removeprefix("0::")
with open(os.path.join(work, "runner.json"), "w") as f:
    json.dump({
        "binary": scidex_jail.find_binary(),
        "status": r.status,
        "stdout": r.stdout,
        "stderr": r.stderr,
        "groups": os.getgroups(),
        "cgroup": own,
        "cgroup_parent": parent,
        "procs_in_own_cgroup": open("/sys/fs/cgroup" + own + "/cgroup.procs").read().split(),
        "pid": os.getpid(),
        "leaves_left": [d for d in os.listdir(parent) if os.path.isdir(os.path.join(parent, d))],
        "run_dirs_left": os.listdir("/run/scidex-jail"),
        "slice_pids_max": open("/sys/fs/cgroup/scidex.slice/scidex-jail.slice/pids.max").read().strip(),
    }, f)
sys.exit(0 if r.status == "ok" else 1)
`

// serviceAnalysis is the analysis: it reads its input and writes its results.
const serviceAnalysis = `import csv, json, os, statistics

here = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(here, "measurements.csv"))))
by = {}
for row in rows:
    by.setdefault(row["sample"], []).append(float(row["value"]))
with open("results.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["sample", "n", "mean"])
    for s in sorted(by):
        w.writerow([s, len(by[s]), statistics.mean(by[s])])
json.dump({"samples": len(by), "rows": len(rows)}, open("summary.json", "w"))
print("analysed", len(rows), "rows")
`

// containerInit runs as PID 1 of the new pid namespace: into the
// container's cgroup ($CG) and a cgroup namespace rooted there, then
// what a container manager gives systemd (a fresh /proc, a read-only
// /sys with the cgroup namespace's cgroup2 on /sys/fs/cgroup, fresh /run
// and /tmp), then systemd, booting into the unit $UNIT alone (and what its
// default dependencies pull in: sysinit.target, where
// systemd-tmpfiles-setup makes the package's /run/scidex-jail).
const containerInit = `set -e
echo 0 >"$CG/cgroup.procs"
exec unshare --cgroup /bin/sh -c '
set -e
mount -t proc proc /proc
mount -o remount,bind,ro /sys
umount /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
exec /lib/systemd/systemd --unit="$UNIT" --show-status=0 --log-target=kmsg
'`

// TestVMSystemdService: in the VM, the Debian package installed (dpkg -i of
// packaging/deb/build.sh's package), an account made with useradd in two
// supplementary groups, and the package's example service run by systemd
// as that account (User=, Delegate=, Slice=scidex-jail.slice, the delegate
// helper) calling scidex_jail.run with Debian's python3 for an analysis
// that reads its input and writes two files. The analysis is ok, its
// outputs are collected and its report written to the destination, the
// report names the account's groups as kept and the run's leaf below the
// service's delegated cgroup in the slice, and nothing is left: no leaf, no
// run directory, no process.
func TestVMSystemdService(t *testing.T) {
	mount := cgroup2Root(t)
	requireVM(t, "boots systemd, installs the Debian package and adds an account")
	requireCommands(t, map[string]string{"dpkg": "dpkg", "unshare": "util-linux", "/lib/systemd/systemd": "systemd", "/usr/bin/python3": "python3"})

	installPackage(t)

	a := newAccount(t, "scidexsvc", "users", "scidexsvclab")

	// The service's files live outside /tmp: the container's /tmp is its
	// own, and booting empties it (tmpfiles.d/tmp.conf).
	w, err := os.MkdirTemp("/srv", "scidex-svc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(w) })
	if err := os.Chmod(w, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w, "runner.py"), serviceRunner, 0o644)
	writeFile(t, filepath.Join(w, "analysis", "analysis.py"), serviceAnalysis, 0o644)
	writeFile(t, filepath.Join(w, "analysis", "measurements.csv"), "sample,value\na,1.5\na,2.5\nb,10\n", 0o644)
	copyTree(t, pythonPackage(), filepath.Join(w, "site", "scidex_jail"))
	if err := os.Mkdir(filepath.Join(w, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{w, filepath.Join(w, "out")} {
		if err := os.Chown(d, a.UID, a.GID); err != nil {
			t.Fatal(err)
		}
	}

	// The example unit, installed as its comment says, and a drop-in.
	unit := filepath.Join("/etc/systemd/system", serviceUnit)
	example, err := os.ReadFile(filepath.Join("/usr/share/doc/scidex-jail/examples/systemd", serviceUnit))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, unit, string(example), 0o644)
	dropIn := strings.NewReplacer("{{user}}", a.Name, "{{w}}", w).Replace(serviceDropIn)
	writeFile(t, filepath.Join(unit+".d", "vmtest.conf"), dropIn, 0o644)
	t.Cleanup(func() { os.RemoveAll(unit + ".d"); os.Remove(unit) })

	out, code, err := bootSystemd(t, mount, "scidex-vmtest-systemd", serviceUnit)
	svcOut, _ := os.ReadFile(filepath.Join(w, "service.out"))
	svcErr, _ := os.ReadFile(filepath.Join(w, "service.err"))
	if err != nil || code != 0 {
		t.Fatalf("systemd with %s: %v (exit %d): %s\nservice stdout:\n%s\nservice stderr:\n%s\nsystemd's log:\n%s",
			serviceUnit, err, code, out, svcOut, svcErr, systemdLog())
	}

	// What the runner saw, as the service.
	var seen struct {
		Binary       string   `json:"binary"`
		Status       string   `json:"status"`
		Stdout       string   `json:"stdout"`
		Groups       []int    `json:"groups"`
		Cgroup       string   `json:"cgroup"`
		Parent       string   `json:"cgroup_parent"`
		Procs        []string `json:"procs_in_own_cgroup"`
		PID          int      `json:"pid"`
		LeavesLeft   []string `json:"leaves_left"`
		RunDirsLeft  []string `json:"run_dirs_left"`
		SlicePIDsMax string   `json:"slice_pids_max"`
	}
	b, err := os.ReadFile(filepath.Join(w, "runner.json"))
	if err == nil {
		err = json.Unmarshal(b, &seen)
	}
	if err != nil {
		t.Fatalf("runner.json: %v; service stderr:\n%s", err, svcErr)
	}
	svcCgroup := "/scidex.slice/scidex-jail.slice/" + serviceUnit
	if seen.Binary != "/usr/bin/scidex-jail" {
		t.Errorf("the Python API found the jail at %s, want the package's /usr/bin/scidex-jail", seen.Binary)
	}
	if seen.Cgroup != svcCgroup+"/runner" || seen.Parent != "/sys/fs/cgroup"+svcCgroup+"/jails" {
		t.Errorf("runner in cgroup %s with parent %s, want %s/runner and /sys/fs/cgroup%s/jails (the service's delegated cgroup in the slice, laid out by the delegate helper)",
			seen.Cgroup, seen.Parent, svcCgroup, svcCgroup)
	}
	// The package's slice unit, as systemd applied it (TasksMax=16384).
	if seen.SlicePIDsMax != "16384" {
		t.Errorf("scidex-jail.slice pids.max = %q, want 16384: the package's slice unit, as systemd applies it", seen.SlicePIDsMax)
	}
	for gid, name := range a.Groups {
		if !slices.Contains(seen.Groups, gid) {
			t.Errorf("the service runs with groups %v, want %s (%d): systemd's User= gives the account's supplementary groups", seen.Groups, name, gid)
		}
	}
	if seen.Status != "ok" || !strings.Contains(seen.Stdout, "analysed 3 rows") {
		t.Errorf("scidex_jail.run: status %s, stdout %q; want ok and the analysis' line", seen.Status, seen.Stdout)
	}
	if len(seen.LeavesLeft) > 0 || len(seen.RunDirsLeft) > 0 {
		t.Errorf("left after the run: leaves %v below %s, run directories %v in /run/scidex-jail; want none", seen.LeavesLeft, seen.Parent, seen.RunDirsLeft)
	}
	if !slices.Equal(seen.Procs, []string{strconv.Itoa(seen.PID)}) {
		t.Errorf("processes in the runner's cgroup after the run: %v, want only the runner (%d)", seen.Procs, seen.PID)
	}

	// What landed in the destination.
	rep := filepath.Join(w, "out", "svc-a1.report.json")
	r := readReport(t, rep)
	if r == nil {
		return
	}
	if r.Status != report.StatusOK || r.Enforced.HostUID != a.UID {
		t.Errorf("report: status %s (%s), host uid %d; want ok as uid %d", r.Status, r.CompletionNotes, r.Enforced.HostUID, a.UID)
	}
	checkGroupsReported(t, a, r)
	if cg := r.Enforced.Cgroup; cg == nil || cg.Version != 2 || len(cg.Paths) != 1 || filepath.Dir(cg.Paths[0]) != seen.Parent {
		t.Errorf("report: enforced.cgroup = %+v, want one v2 leaf below %s", r.Enforced.Cgroup, seen.Parent)
	}
	var names []string
	for _, o := range r.Outputs {
		names = append(names, o.Path)
		got, err := os.ReadFile(filepath.Join(w, "out", "svc-a1", o.Path))
		if err != nil || int64(len(got)) != o.Size {
			t.Errorf("collected %s: %d bytes, %v; want the %d of the report", o.Path, len(got), err, o.Size)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"results.csv", "summary.json"}) {
		t.Errorf("outputs %v, want [results.csv summary.json]", names)
	}
	if got, _ := os.ReadFile(filepath.Join(w, "out", "svc-a1", "results.csv")); string(got) != "sample,n,mean\r\na,2,2.0\r\nb,1,10.0\r\n" {
		t.Errorf("results.csv = %q", got)
	}
	if ps := processesOf(a.UID); len(ps) > 0 {
		t.Errorf("processes of %s left after systemd exited: %v", a.Name, ps)
	}
}

// installPackage installs the Debian package of the jail built here
// (SCIDEX_DEB, as .ci/vmtests builds it, or built now with
// packaging/deb/build.sh) with dpkg -i, in the VM, whatever the host
// has of the package (installed, removed, purged); purged at cleanup.
func installPackage(t *testing.T) {
	t.Helper()
	if os.Getenv("SCIDEX_IN_VM") != "1" {
		t.Fatal("installPackage purges and installs the package: call it only in the VM harness (requireVM)")
	}
	deb := os.Getenv("SCIDEX_DEB")
	if deb == "" {
		out := sharedDir(t, "scidex-svc-deb-")
		build := exec.Command(filepath.Join(repoRoot, "packaging", "deb", "build.sh"), jailBin, "0.0~vmtest", out)
		build.Stderr = os.Stderr
		b, err := build.Output()
		if err != nil {
			t.Fatalf("packaging/deb/build.sh: %v", err)
		}
		deb = strings.TrimSpace(string(b))
	}
	// man-db's trigger would rebuild the whole manual database after
	// dpkg -i and again after the purge, 3 minutes each under emulation,
	// for nothing this test reads: off, as debconf's man-db/auto-update
	// false turns it off (the flag file it checks), in the VM's overlay.
	if err := os.Remove(manDBAutoUpdate); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	} else if err == nil {
		t.Cleanup(func() { writeFile(t, manDBAutoUpdate, "", 0o644) })
	}
	// The VM's root is the host's under a throw-away overlay: a package
	// the host has installed, or removed but not purged, is installed
	// here too, its conffile with it, and dpkg -i would upgrade over it
	// and keep that conffile. Purged first, in the overlay only, so the
	// test always starts from a machine that never had the package.
	if s := status(t); s != "" && !strings.Contains(s, "not-installed") {
		t.Logf("the host's scidex-jail (%s) is purged in the VM's overlay first", s)
		dpkg(t, "--purge", "scidex-jail")
	}
	t.Cleanup(func() { dpkg(t, "--purge", "scidex-jail") })
	dpkg(t, "-i", deb)
}

// bootSystemd boots the machine's systemd as the init of a container
// (containerInit) in a cgroup of its own, name, below mount, into unit,
// and waits for it to exit; it returns systemd's output and exit status.
func bootSystemd(t *testing.T, mount, name, unit string) ([]byte, int, error) {
	t.Helper()
	cg := filepath.Join(mount, name)
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroupTree(t, cg) })
	// Not a timed assertion: a guard against a boot that hangs, far above
	// what it takes (about 15 s under emulation).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	boot := exec.CommandContext(ctx, "unshare", "--pid", "--fork", "--kill-child", "--mount", "--propagation", "private",
		"--uts", "--ipc", "/bin/sh", "-c", containerInit)
	boot.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "container=scidex-vmtest", "CG=" + cg, "UNIT=" + unit}
	out, err := boot.CombinedOutput()
	return out, boot.ProcessState.ExitCode(), err
}

// systemdLog is systemd's part of the kernel log (its log target in the
// container).
func systemdLog() string {
	log, _ := exec.Command("dmesg").Output()
	return systemdLines(string(log))
}

// systemdLines keeps the kernel log's lines from systemd and its units.
func systemdLines(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "systemd") || strings.Contains(l, ".service") || strings.Contains(l, ".slice") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// copyTree copies the regular files of src (a Python package) into dst,
// readable by all.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}
