package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/childmode"
	"github.com/scidex/scidex-jail/jail/hostcheck"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
)

// The probes of `scidex-jail check`. Each tries what a run does: namespaces
// are created by spawning this binary in them, Landlock and seccomp are
// loaded by a child (this binary in the probe child mode, probeChild), the
// tmp-root is written to and entered as the analysis uid.

// probeChild is this binary started as the probe child (childmode.Probe,
// by jail/hostcheck's ProbeSecurity): it applies the plan's Landlock and
// seccomp policies it reads on stdin to itself, which cannot be undone,
// and reports what they denied as JSON on stdout (SecurityChild). It
// returns the exit status.
func probeChild() int {
	if err := hostcheck.SecurityChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", childmode.Probe, err)
		return exitSetup
	}
	return 0
}

// checkUserns spawns this binary as the plan's init is born: in its
// namespaces, with its uid mapping, identity and capabilities.
func checkUserns(pl *jail.Plan) checkLine {
	var names []string
	for _, ns := range pl.Namespaces {
		names = append(names, ns.Name)
	}
	uid := pl.IDs.HostUID
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{"scidex-jail", "version"}, Env: []string{}, SysProcAttr: pl.ProcAttr()}
	cmd.SysProcAttr.Pdeathsig = unix.SIGKILL
	l := checkLine{Name: "user namespaces"}
	out, err := cmd.CombinedOutput()
	what := strings.Join(names, ", ") + " namespaces"
	switch {
	case err == nil && strings.HasPrefix(string(out), "scidex-jail "):
		l.State = stateOK
		l.Text = fmt.Sprintf("%s created and this binary ran in them as uid %d inside = host uid %d", what, jail.InsideUID, uid)
		return l
	case err == nil:
		err = fmt.Errorf("the probe printed %q, want the version line", out)
	}
	l.State = stateMissing
	exe, _ := os.Executable()
	switch {
	case errors.Is(err, unix.EACCES):
		l.Text = fmt.Sprintf("start this binary (%s) as host uid %d in new %s: %v", exe, uid, what, err)
		l.Fix = fmt.Sprintf("the binary must be executable by host uid %d: chmod 0755 %s", uid, exe)
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EUSERS):
		l.Text = fmt.Sprintf("create %s: %v; found %s", what, err, usernsSysctls())
		l.Fix = "allow user namespaces: sysctl -w user.max_user_namespaces=15000 (must be > 0); on Debian kernels sysctl -w kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile allowing userns for this binary); in a container, a seccomp profile that allows clone/unshare with CLONE_NEWUSER"
	default:
		l.Text = fmt.Sprintf("run this binary in new %s: %v", what, err)
		if len(out) > 0 {
			l.Text += ": " + strings.TrimSpace(string(out))
		}
		l.Fix = "see the error above; the same step starts every run"
	}
	return l
}

// checkInit finds, checks and starts the init program as a run does, in
// the plan's namespaces, and reads the version it states.
func checkInit(pl *jail.Plan) checkLine {
	l := checkLine{Name: "init"}
	res, err := initconn.CheckInit(pl.ProcAttr())
	var ie *initconn.InitError
	switch {
	case err == nil:
		l.State = stateOK
		l.Text = fmt.Sprintf("%s, version %s as this binary, started in the run's namespaces", res.Path, res.Version)
	case errors.As(err, &ie):
		l.State = stateMissing
		l.Text = fmt.Sprintf("%s: %s", ie.Path, ie.Found)
		l.Fix = ie.Fix
	default:
		l.State = stateMissing
		l.Text = fmt.Sprintf("start %s: %v", orDefault(res.Path, initconn.InitName), err)
		l.Fix = "see the user namespaces line; the same step starts every run"
	}
	return l
}

// usernsSysctls reads the settings that decide whether user namespaces may
// be created, for the message when they may not.
func usernsSysctls() string {
	var found []string
	for _, s := range []string{"user/max_user_namespaces", "kernel/unprivileged_userns_clone", "kernel/apparmor_restrict_unprivileged_userns"} {
		b, err := os.ReadFile("/proc/sys/" + s)
		if err != nil {
			continue
		}
		found = append(found, strings.ReplaceAll(s, "/", ".")+" = "+strings.TrimSpace(string(b)))
	}
	if len(found) == 0 {
		return "none of the user namespace sysctls"
	}
	return strings.Join(found, ", ")
}

// landlockNeeds names what the profile asks of Landlock, by ABI.
func landlockNeeds(p profile.Profile) string {
	s := "filesystem rules with refer (ABI 2), truncate (3), device ioctl (5), signal and abstract unix socket scoping (6)"
	if net, err := netmode.Lookup(p.Net); err == nil && net.TCPPorts {
		s += ", TCP bind and connect rules (4) for net " + string(p.Net)
	}
	return s
}

// checkLandlock says what this kernel's Landlock enforces. Whether that is
// enough is the promise lines' call: a right Landlock lacks may be a second
// layer another one already holds.
func checkLandlock(p profile.Profile, sp hostcheck.Security) checkLine {
	ll := sp.Landlock
	l := checkLine{Name: "landlock"}
	switch {
	case len(ll.Failed) > 0:
		l.State = stateMissing
		l.Text = fmt.Sprintf("Landlock ABI %d restricted the child, but: %s", ll.ABI, strings.Join(ll.Failed, "; "))
		l.Fix = "the kernel's Landlock does not deny what it should: report this with the kernel version (uname -r)"
	case ll.Err != "":
		l.State = stateMissing
		if slices.Contains(p.OptIns(), promise.OptIn{Kind: promise.OptInDegrade, Protection: promise.ProtectLandlock}) {
			l.State = stateDegraded
		}
		l.Text = "Landlock: " + ll.Err + "; the promises below say what holds without it"
		l.Fix = orDefault(ll.Hint, "run a Linux with Landlock enabled (lsm= boot parameter)")
	default:
		l.State = stateOK
		l.Text = fmt.Sprintf("Landlock ABI %d (all of the profile's rules need ABI %d: %s); enforced in a child process, which saw: %s",
			ll.ABI, ll.Required, landlockNeeds(p), strings.Join(ll.Tried, ", "))
		if len(ll.Lost) > 0 {
			l.Text += "; on this kernel Landlock does not: " + strings.Join(ll.Lost, "; ") + " (the promises below say which other layers hold those)"
		}
	}
	return l
}

func checkSeccomp(p profile.Profile, sp hostcheck.Security) checkLine {
	sc := sp.Seccomp
	l := checkLine{Name: "seccomp"}
	if sc.Err == "" && len(sc.Failed) == 0 {
		l.State = stateOK
		sum := sc.SHA256
		if len(sum) > 12 {
			sum = sum[:12]
		}
		l.Text = fmt.Sprintf("filter %s for %s (%d instructions, sha256 %s...) loaded in a child process, which saw: %s",
			sc.Policy, sc.Arch, sc.Insns, sum, strings.Join(sc.Tried, ", "))
		return l
	}
	l.State = stateMissing
	if len(sc.Failed) > 0 {
		l.Text = fmt.Sprintf("filter %s loaded, but: %s", sc.Policy, strings.Join(sc.Failed, "; "))
		l.Fix = "the filter does not deny what it should: report this with the kernel version (uname -r) and architecture"
		return l
	}
	l.Text = fmt.Sprintf("filter %s: %s", sc.Policy, sc.Err)
	l.Fix = orDefault(sc.Fix, "see the error above; a kernel built with CONFIG_SECCOMP_FILTER is needed")
	return l
}

// checkTmpRoot checks that the jail can create run directories in tmpRoot
// and that the analysis' host uid can reach them.
func checkTmpRoot(tmpRoot string, uid, gid int) checkLine {
	l := checkLine{Name: "tmp-root", State: stateMissing}
	if !filepath.IsAbs(tmpRoot) || filepath.Clean(tmpRoot) != tmpRoot {
		l.Text = fmt.Sprintf("%q is not a clean absolute path", tmpRoot)
		l.Fix = "pass --tmp-root as an absolute path such as /tmp"
		return l
	}
	d, err := os.MkdirTemp(tmpRoot, ".scidex-jail-check-")
	if err != nil {
		l.Text = fmt.Sprintf("create a directory in %s: %v", tmpRoot, err)
		l.Fix = fmt.Sprintf("create %s as a directory writable by the user running scidex-jail, or choose another --tmp-root", tmpRoot)
		if errors.Is(err, fs.ErrNotExist) {
			l.Fix = fmt.Sprintf("mkdir -m 0755 %s, or choose another --tmp-root", tmpRoot)
		}
		return l
	}
	os.Remove(d)
	if os.Geteuid() != 0 {
		l.State = stateOK
		l.Text = tmpRoot + " is writable; the analysis runs as this user"
		return l
	}
	// The analysis' uid must pass through tmp-root to reach its directory:
	// try it as that uid, which also honours ACLs and unusual modes.
	cmd := exec.Command("/bin/sh", "-c", `cd -- "$1"`, "sh", tmpRoot)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	if out, err := cmd.CombinedOutput(); err != nil {
		l.Text = fmt.Sprintf("%s is writable, but host uid %d cannot enter it: %v: %s", tmpRoot, uid, err, strings.TrimSpace(string(out)))
		l.Fix = fmt.Sprintf("give every directory on the path search permission for others (chmod o+x, e.g. chmod 0755 %s), or choose another --tmp-root", tmpRoot)
		return l
	}
	l.State = stateOK
	l.Text = fmt.Sprintf("%s is writable, and host uid %d can enter it", tmpRoot, uid)
	return l
}
