package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
)

// account is a real login account, made as an administrator makes one:
// useradd with a home, its own group and supplementary groups. Unlike a
// process started with Go's SysProcAttr.Credential (which clears the
// groups), a process entered through su or setpriv --init-groups holds
// every supplementary group, as a systemd User= service and a researcher's
// login do (issue 22).
type account struct {
	Name     string
	UID, GID int
	Groups   map[int]string // supplementary groups (not the account's own): gid -> name
}

// newAccount creates the account name in the supplementary groups given,
// creating the groups that do not exist yet; all of it is deleted at
// cleanup (userdel -r, groupdel). It changes /etc/passwd and /etc/group:
// the tests call it only in the VM, whose root is a throw-away overlay.
func newAccount(t *testing.T, name string, groups ...string) account {
	t.Helper()
	requireCommands(t, map[string]string{"useradd": "passwd", "groupadd": "passwd", "userdel": "passwd", "groupdel": "passwd"})
	for _, g := range groups {
		if _, err := user.LookupGroup(g); err == nil {
			continue
		}
		run(t, "groupadd", g)
		t.Cleanup(func() {
			if out, err := exec.Command("groupdel", g).CombinedOutput(); err != nil {
				t.Errorf("groupdel %s: %v: %s", g, err, out)
			}
		})
	}
	run(t, "useradd", "--create-home", "--user-group", "--shell", "/bin/sh", "--groups", strings.Join(groups, ","), name)
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", "--remove", name).CombinedOutput(); err != nil {
			t.Errorf("userdel --remove %s: %v: %s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	a := account{Name: name, Groups: map[int]string{}}
	a.UID, _ = strconv.Atoi(u.Uid)
	a.GID, _ = strconv.Atoi(u.Gid)
	gids, err := u.GroupIds()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range gids {
		gid, _ := strconv.Atoi(s)
		if gid == a.GID {
			continue
		}
		g, err := user.LookupGroupId(s)
		if err != nil {
			t.Fatal(err)
		}
		a.Groups[gid] = g.Name
	}
	if len(a.Groups) != len(groups) {
		t.Fatalf("account %s: supplementary groups %v, want %v", name, a.Groups, groups)
	}
	return a
}

// requireVM skips a test that changes the machine's configuration (why
// says how) unless it runs in the VM harness, whose root is a throw-away
// overlay; .ci/vmtests would fail on the skip, but SCIDEX_IN_VM is always
// set there.
func requireVM(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("SCIDEX_IN_VM") != "1" {
		t.Skipf("%s: runs only in the VM harness (.ci/vmtests; SCIDEX_IN_VM=1 not set)", why)
	}
}

// asAccountIn runs a shell script as the account from a process born in
// the cgroup dir, the way systemd starts a User= service's main process:
// there, as root, initgroups (every supplementary group of the account),
// setgid, setuid, exec, in the one process: setpriv --init-groups does
// exactly that. (su forks and waits, so a root process would stay in the
// cgroup beside the account's.) HOME, USER, LOGNAME and SHELL are the
// account's, as systemd sets them; env is added.
func asAccountIn(t *testing.T, a account, cgroup, script string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	fd, err := unix.Open(cgroup, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	cmd := exec.Command("setpriv", "--reuid="+strconv.Itoa(a.UID), "--regid="+strconv.Itoa(a.GID), "--init-groups",
		"--", "/bin/sh", "-c", script)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/home/" + a.Name,
		"USER=" + a.Name, "LOGNAME=" + a.Name, "SHELL=/bin/sh"}, env...)
	cmd.Dir = "/"
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd, Pdeathsig: syscall.SIGKILL}
	err = cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("setpriv as %s: %v", a.Name, err)
	}
	return out.String(), errb.String(), code
}

// su runs a shell script as the account through su, as an administrator
// or a login enters it (PAM, initgroups), from the test's own cgroup.
func su(t *testing.T, a account, script string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("su", "--shell", "/bin/sh", "--command", script, a.Name)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}, env...)
	cmd.Dir = "/"
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("su %s: %v", a.Name, err)
	}
	return out.String(), errb.String(), code
}

// checkGroupsHeld checks the output of `id -G` run as the account: its
// own gid and every supplementary group (what su and systemd's User= give
// it, and what the jail then cannot drop).
func checkGroupsHeld(t *testing.T, a account, idG string) {
	t.Helper()
	var held []int
	for _, f := range strings.Fields(idG) {
		gid, _ := strconv.Atoi(f)
		held = append(held, gid)
	}
	for gid, name := range a.Groups {
		if !slices.Contains(held, gid) {
			t.Errorf("id -G as %s = %v, want its supplementary group %s (%d): the caller must hold its groups for this test to mean anything", a.Name, held, name, gid)
		}
	}
}

// checkGroupsReported checks that a report names the caller's
// supplementary groups as kept (enforced.identity.host_groups_kept, each
// with its gid and name).
func checkGroupsReported(t *testing.T, a account, r *report.Report) {
	t.Helper()
	kept := map[int]string{}
	for _, g := range r.Enforced.Identity.HostGroupsKept {
		kept[g.GID] = g.Name
	}
	for gid, name := range a.Groups {
		if got, ok := kept[gid]; !ok || got != name {
			t.Errorf("run %s: enforced.identity.host_groups_kept = %v, want gid %d named %s among them", r.ID, kept, gid, name)
		}
	}
}

// processesOf lists the pids of processes whose real uid is uid.
func processesOf(uid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 && f[0] == strconv.Itoa(uid) {
					cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
					out = append(out, fmt.Sprintf("%s (%s)", e.Name(), strings.ReplaceAll(string(cmd), "\x00", " ")))
				}
			}
		}
	}
	return out
}
