package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// containerRoot is the host uid the containers' root maps to (the first of
// a subordinate range, as rootless container runtimes and Kubernetes' pod
// user namespaces use).
const containerRoot = 100000

// runContainer starts a container whose cgroup is the delegated dir (owned
// by its root) and returns what its script printed and its exit code.
// uids is how many ids the container maps from containerRoot on.
func runContainer(t *testing.T, dir string, uids int, spec containerSpec) (stdout, stderr string, code int) {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = []string{containerEnv + "=" + string(b)}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: containerRoot, Size: uids}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: containerRoot, Size: uids}},
		GidMappingsEnableSetgroups: uids > 1,
		Credential:                 &syscall.Credential{Uid: 0, Gid: 0},
		UseCgroupFD:                true, CgroupFD: fd,
		Pdeathsig: syscall.SIGKILL,
	}
	err = cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("container: %v; stderr %s", err, errb.String())
	}
	return out.String(), errb.String(), code
}

// volume is a host directory for a container's /tmp holding the jail, its
// init and the delegate helper in bin/, owned by the container's root.
func volume(t *testing.T) string {
	t.Helper()
	v := sharedDir(t, "scidex-nested-")
	bin := filepath.Join(v, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// The jail and its init, owned by the container's root: a jail
	// running as root execs only an init owned by root (of its user
	// namespace; host root's files show as the overflow uid there).
	for _, f := range []string{copyExecutable(t, jailBin, bin), copyExecutable(t, testutil.InitBeside(jailBin), bin)} {
		if err := os.Chown(f, containerRoot, containerRoot); err != nil {
			t.Fatal(err)
		}
	}
	copyExecutable(t, delegateHelper(t), bin)
	if err := os.Chown(v, containerRoot, containerRoot); err != nil {
		t.Fatal(err)
	}
	return v
}

// nestedRuns runs, inside the container and through the delegate helper,
// check and three runs that hit each limit and each file/network layer.
// With fixed ids (U): the default lease range lies outside the 65536 ids
// the container maps, and its read-only root has no writable /run for the
// leases (docs/deploying.md).
const nestedRuns = `exec /tmp/bin/delegate /bin/sh -c '
J=/tmp/bin/scidex-jail
P=$SCIDEX_JAIL_CGROUP_PARENT
U="--uid 65534 --gid 65534"
$J check $U --cgroup-parent "$P" >/tmp/check.txt 2>&1; echo "check $?"
$J run $U --id n-oom --cgroup-parent "$P" --report /tmp/oom.json --memory 64M --grace 1s -- \
	/usr/bin/python3 -c "b = [bytearray(8 << 20) for _ in range(1000)]" 2>/dev/null; echo "oom $?"
$J run $U --id n-fork --cgroup-parent "$P" --report /tmp/fork.json --pids 16 --grace 1s -- \
	/bin/sh -c "i=0; while [ \$i -lt 64 ]; do sleep 3 & i=\$((i+1)); done; wait" 2>/dev/null; echo "fork $?"
$J run $U --id n-ok --cgroup-parent "$P" --report /tmp/ok.json --memory 128M --cpus 0.5 --pids 32 -- \
	/bin/sh -c "cat /proc/self/cgroup; id -u; echo x >/etc/x || echo etc-refused; echo x >/tmp/bin/x || echo bin-refused; /usr/bin/python3 -c \"import socket; socket.socket()\" || echo inet-refused" 2>/dev/null; echo "ok $?"
'`

// TestVMNestedContainer starts the jail inside containers built from plain
// namespaces: an unprivileged user namespace it did not make, its own
// cgroup namespace whose root is a delegated cgroup, a read-only root
// with a writable /tmp volume. In a container that allows what the jail
// needs, every layer holds (check says so; the limits, Landlock, the
// mount view and seccomp act). In containers that do not, the run is
// refused with exit 125 and a message naming what the container must
// allow.
func TestVMNestedContainer(t *testing.T) {
	mount := cgroup2Root(t)

	t.Run("everything allowed", func(t *testing.T) {
		dir := filepath.Join(mount, "scidex-test-container")
		delegate(t, dir, containerRoot)
		v := volume(t)
		out, errOut, code := runContainer(t, dir, 65536, containerSpec{Tmp: v, Script: nestedRuns})
		if code != 0 {
			t.Fatalf("container exit %d; stdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		for _, want := range []string{"check 0\n", "oom 137\n", "ok 0\n", "0::/\n1000\n", "etc-refused\n", "bin-refused\n", "inet-refused\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("container output lacks %q:\n%s\nstderr:\n%s", want, out, errOut)
			}
		}
		check, _ := os.ReadFile(filepath.Join(v, "check.txt"))
		for name, l := range checkLines(string(check)) {
			if l[0] != "OK" {
				t.Errorf("check in the container: %s = %s (%s), want OK", name, l[0], l[1])
			}
		}
		for _, tc := range []struct {
			id     string
			status report.Status
		}{{"oom", report.StatusOOMKilled}, {"fork", report.StatusPIDsLimit}, {"ok", report.StatusOK}} {
			r := readReport(t, filepath.Join(v, tc.id+".json"))
			if r == nil {
				continue
			}
			if r.Status != tc.status {
				t.Errorf("run %s in the container: status %s (%s), want %s", tc.id, r.Status, r.CompletionNotes, tc.status)
			}
			e := r.Enforced
			if e.Landlock == nil || e.Seccomp == nil || e.Cgroup == nil || e.Cgroup.Version != 2 || len(e.Degraded) > 0 || e.HostUID != 65534 {
				t.Errorf("run %s in the container: enforced = %+v, want Landlock, seccomp, a v2 leaf, uid 65534 of the container, nothing degraded", tc.id, e)
			}
			if e.Cgroup != nil && (len(e.Cgroup.Paths) != 1 || filepath.Dir(e.Cgroup.Paths[0]) != "/sys/fs/cgroup/jails") {
				t.Errorf("run %s: leaf %v, want one below the container's /sys/fs/cgroup/jails", tc.id, e.Cgroup.Paths)
			}
		}
		if left := cgroupDirs(filepath.Join(dir, "jails")); len(left) > 0 {
			t.Errorf("leaves left in the container's cgroup: %v", left)
		}
	})

	// Each container lacks one thing the jail needs: the run is refused
	// (exit 125) with a message naming it.
	for _, tc := range []struct {
		name    string
		uids    int
		spec    containerSpec
		script  string
		message []string
	}{
		{"one uid mapped", 1, containerSpec{}, `exec /tmp/bin/delegate /tmp/bin/scidex-jail run --id n1 --cgroup-parent "$SCIDEX_JAIL_CGROUP_PARENT" -- /bin/true`,
			[]string{"--uid-range", "1879048192-1879113727 includes id 1879048192, which is not mapped in the user namespace", "hostUsers: false"}},
		{"masked /proc", 65536, containerSpec{MaskProc: true}, `exec /tmp/bin/delegate /tmp/bin/scidex-jail run --uid 65534 --gid 65534 --id n2 --cgroup-parent "$SCIDEX_JAIL_CGROUP_PARENT" -- /bin/true`,
			[]string{"a fresh /proc", "procMount: Unmasked"}},
		{"read-only cgroup", 65536, containerSpec{CgroupRO: true}, `exec /tmp/bin/scidex-jail run --uid 65534 --gid 65534 --id n3 -- /bin/true`,
			[]string{"write access to cgroup /sys/fs/cgroup", "read-only", "must mount its cgroup"}},
		{"no writable /tmp", 65536, containerSpec{}, `exec /usr/bin/env PATH=/usr/bin:/bin ` + jailBinInRO + ` run --id n4 -- /bin/true`,
			[]string{"--tmp-root /tmp is not writable", "emptyDir"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(mount, "scidex-test-container")
			delegate(t, dir, containerRoot)
			spec := tc.spec
			if tc.name != "no writable /tmp" {
				spec.Tmp = volume(t)
			}
			spec.Script = tc.script
			out, errOut, code := runContainer(t, dir, tc.uids, spec)
			if code != 125 {
				t.Errorf("container exit %d, want 125 (refused); stdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			for _, m := range tc.message {
				if !strings.Contains(errOut, m) {
					t.Errorf("refusal does not name %q; stderr:\n%s", m, errOut)
				}
			}
			for _, d := range cgroupDirs(dir) {
				if strings.Contains(filepath.Base(d), "scidex-n") {
					t.Errorf("refused run left cgroup %s", d)
				}
			}
			t.Logf("refused with:\n%s", errOut)
		})
	}
}

// jailBinInRO is where the test binary's jail is reachable when the
// container has no /tmp volume: the VM harness's copy, set by TestMain.
var jailBinInRO = os.Getenv("SCIDEX_JAIL_BIN")
