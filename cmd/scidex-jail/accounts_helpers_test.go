package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Real accounts for the rootless tests (accounts_test.go). Go's
// SysProcAttr.Credential sets the uid and gid and clears the supplementary
// groups, which no real caller does: a login, `su`, a systemd service with
// User= all carry the account's groups (initgroups). So these tests make
// the account with useradd, and run the real binary through su or setpriv
// --init-groups, as a researcher or a service would.

// account is one real login made for a test, removed with it.
type account struct {
	Name     string // sjt-<random>
	UID, GID int    // its own uid and primary group
	Home     string
	Group    string // a fresh group it is a supplementary member of (besides users)
	GroupGID int
	UsersGID int // the users group's gid, its other supplementary group
}

// newAccount makes a fresh account with useradd -m -G users,<fresh group>
// and removes both (userdel -r, groupdel) when the test ends.
func newAccount(t *testing.T) account {
	t.Helper()
	requireRoot(t)
	b := make([]byte, 4)
	rand.Read(b)
	name := "sjt-" + hex.EncodeToString(b)
	group := name + "-g"
	sysRun(t, "groupadd", group)
	t.Cleanup(func() { sysCleanup(t, "groupdel", group) })
	sysRun(t, "useradd", "-m", "-s", "/bin/sh", "-G", "users,"+group, name)
	// Cleanups run last first: the user goes before its group.
	t.Cleanup(func() { sysCleanup(t, "userdel", "-r", name) })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("look up the new account: %v", err)
	}
	a := account{Name: name, Home: u.HomeDir, Group: group}
	a.UID, _ = strconv.Atoi(u.Uid)
	a.GID, _ = strconv.Atoi(u.Gid)
	a.GroupGID = groupID(t, group)
	a.UsersGID = groupID(t, "users")
	return a
}

func groupID(t *testing.T, name string) int {
	t.Helper()
	g, err := user.LookupGroup(name)
	if err != nil {
		t.Fatalf("look up group %s: %v", name, err)
	}
	id, _ := strconv.Atoi(g.Gid)
	return id
}

func sysRun(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func sysCleanup(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Errorf("cleanup %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// tmpRootFor is a fresh tmp-root owned by a, in a directory it can reach.
func (a account) tmpRootFor(t *testing.T) string {
	t.Helper()
	d := filepath.Join(tmpRoot(t), "tmp")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, a.UID, a.GID); err != nil {
		t.Fatal(err)
	}
	return d
}

// setpriv runs argv as a, with its groups from the group database, as a
// login or a service has them: setpriv --init-groups, no PAM, argv as is.
func (a account) setpriv(argv ...string) *exec.Cmd {
	args := append([]string{"--reuid=" + a.Name, "--regid=" + a.Name, "--init-groups", "--"}, argv...)
	cmd := exec.Command("setpriv", args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + a.Home, "USER=" + a.Name, "LOGNAME=" + a.Name}
	cmd.Dir = "/"
	return cmd
}

// su runs the shell command line as a, through su and PAM, as the issue's
// reproduction does.
func (a account) su(line string) *exec.Cmd {
	cmd := exec.Command("su", a.Name, "-s", "/bin/sh", "-c", line)
	cmd.Dir = "/"
	return cmd
}

// runAs runs cmd (made by setpriv or su) to completion and reads the
// report at rep.
func runAs(t *testing.T, cmd *exec.Cmd, rep string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return finishJail(t, cmd, err, rep, &out, &errb)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
