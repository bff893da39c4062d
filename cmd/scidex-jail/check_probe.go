package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/landlock"
	"github.com/scidex/scidex-jail/seccomp"
)

// The probes of `scidex-jail check`. Each tries what a run does: namespaces
// are created by spawning this binary in them, Landlock and seccomp are
// loaded by a child (`check --probe-child`, which reports as JSON on its
// stdout), the tmp-root is written to and entered as the analysis uid.

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
	res, err := jail.CheckInit(pl)
	var ie *jail.InitError
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
		l.Text = fmt.Sprintf("start %s: %v", orDefault(res.Path, jail.InitName), err)
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

// securityProbe is what the probe child found, sent as JSON.
type securityProbe struct {
	Landlock struct {
		ABI      int      `json:"abi"`
		Required int      `json:"required"`
		Lost     []string `json:"lost"`
		Err      string   `json:"err"`  // Restrict failed: why
		Hint     string   `json:"hint"` // how to get what was missing
		Tried    []string `json:"tried"`
		Failed   []string `json:"failed"` // tries that did not see the denial
	} `json:"landlock"`
	Seccomp struct {
		Policy string   `json:"policy"`
		Arch   string   `json:"arch"`
		Insns  int      `json:"insns"`
		SHA256 string   `json:"sha256"`
		Err    string   `json:"err"`
		Fix    string   `json:"fix"`
		Tried  []string `json:"tried"`
		Failed []string `json:"failed"`
	} `json:"seccomp"`
}

// runSecurityChild re-executes this binary as the probe child and hands
// it the plan's security config on stdin, the one the init would get; a
// child that could not report is recorded as an error of both layers.
func runSecurityChild(pl *jail.Plan) securityProbe {
	args := []string{"scidex-jail", "check", "--probe-child"}
	var sp securityProbe
	in, err := json.Marshal(pl.Init.Security)
	if err != nil {
		msg := fmt.Sprintf("bug: encode the plan's security config: %v", err)
		sp.Landlock.Err, sp.Seccomp.Err = msg, msg
		return sp
	}
	var out, errb bytes.Buffer
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: args, Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errb,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: unix.SIGKILL}}
	err = cmd.Run()
	if err == nil {
		err = json.Unmarshal(out.Bytes(), &sp)
	}
	if err != nil {
		msg := fmt.Sprintf("probe child %q: %v: %s", strings.Join(args[1:], " "), err, strings.TrimSpace(errb.String()))
		sp.Landlock.Err, sp.Seccomp.Err = msg, msg
	}
	return sp
}

// securityChild is the probe child: it applies the plan's Landlock and
// seccomp policies (read from r) to itself the way the init does
// (no_new_privs, Landlock, seccomp last), tries that each one denies what
// it should, and reports on w.
func securityChild(r io.Reader, w io.Writer) error {
	var sec jail.SecurityConfig
	if err := json.NewDecoder(r).Decode(&sec); err != nil {
		return fmt.Errorf("check: read the security config: %w", err)
	}
	var sp securityProbe
	if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		return fmt.Errorf("check: set no_new_privs: %w", e)
	}
	if sec.Landlock != nil {
		probeLandlock(sec.Landlock, &sp)
	}
	if sec.Seccomp != nil {
		probeSeccomp(sec.Seccomp, &sp)
	}
	return json.NewEncoder(w).Encode(sp)
}

// probeLandlock applies pol as the init would: whatever this kernel's
// Landlock offers, down to the ABI the promises were decided on.
func probeLandlock(pol *landlock.Policy, sp *securityProbe) {
	ll := &sp.Landlock
	res, err := pol.Restrict()
	ll.ABI, ll.Required, ll.Lost = res.ABI, res.Required, res.Degraded
	var ue *landlock.UnsupportedError
	switch {
	case err != nil && errors.As(err, &ue):
		ll.Err, ll.Hint = ue.Finding(), ue.Fix()
	case err != nil:
		ll.Err = err.Error()
	case res.ABI == 0:
		if _, err := landlock.ProbeABI(); errors.As(err, &ue) {
			ll.Err, ll.Hint = ue.Finding(), ue.Fix()
		} else {
			ll.Err = "this kernel has no Landlock"
		}
	default:
		// Landlock denies even root; the parent is outside the domain.
		_, err := os.ReadDir("/etc")
		tried(&ll.Tried, &ll.Failed, "list /etc", err, unix.EACCES)
		if res.ABI >= 6 {
			tried(&ll.Tried, &ll.Failed, "signal the parent", unix.Kill(os.Getppid(), 0), unix.EPERM)
		}
		if pol.HandleTCP && res.ABI >= 4 {
			tried(&ll.Tried, &ll.Failed, "TCP bind", bindTCP(), unix.EACCES)
		}
	}
}

// probeSeccomp loads the plan's filter and tries a call it refuses in
// every network mode.
func probeSeccomp(pol *seccomp.Policy, sp *securityProbe) {
	sc := &sp.Seccomp
	sc.Policy = pol.String()
	prog, err := seccomp.Lookup(*pol)
	if err == nil {
		sc.Arch, sc.Insns, sc.SHA256 = prog.Arch, len(prog.Filter), prog.SHA256
		err = prog.Load()
	}
	var se *seccomp.UnsupportedError
	switch {
	case errors.As(err, &se):
		sc.Err, sc.Fix = se.Feature+" unavailable: "+se.Found, se.Fix
	case err != nil:
		sc.Err = err.Error()
	default:
		status, err := os.ReadFile("/proc/self/status")
		if err == nil && !bytes.Contains(status, []byte("\nSeccomp:\t2\n")) {
			err = fmt.Errorf("/proc/self/status does not show seccomp filter mode 2")
		}
		tried(&sc.Tried, &sc.Failed, "filter mode in /proc/self/status", err, nil)
		// Refused in every network mode; root without a filter gets a socket.
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err == nil {
			unix.Close(fd)
		}
		tried(&sc.Tried, &sc.Failed, "socket(AF_PACKET)", err, unix.EAFNOSUPPORT)
	}
}

// bindTCP binds a TCP socket to a loopback port the kernel picks: the TCP
// rules deny bind on every port.
func bindTCP() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
}

// tried records one try: want is the error the protection should cause
// (nil: success is wanted).
func tried(ok, failed *[]string, what string, got error, want error) {
	if (want == nil && got == nil) || (want != nil && errors.Is(got, want)) {
		s := what
		if want != nil {
			s += " refused with " + unix.ErrnoName(want.(unix.Errno))
		}
		*ok = append(*ok, s)
		return
	}
	if want == nil {
		*failed = append(*failed, fmt.Sprintf("%s: %v", what, got))
		return
	}
	*failed = append(*failed, fmt.Sprintf("%s: got %v, want %s", what, errOrSuccess(got), unix.ErrnoName(want.(unix.Errno))))
}

func errOrSuccess(err error) string {
	if err == nil {
		return "success"
	}
	return err.Error()
}

// landlockNeeds names what the profile asks of Landlock, by ABI.
func landlockNeeds(p jail.Profile) string {
	s := "filesystem rules with refer (ABI 2), truncate (3), device ioctl (5), signal and abstract unix socket scoping (6)"
	if p.Net == jail.NetHost {
		s += ", TCP bind and connect rules (4) for net host"
	}
	return s
}

// checkLandlock says what this kernel's Landlock enforces. Whether that is
// enough is the promise lines' call: a right Landlock lacks may be a second
// layer another one already holds.
func checkLandlock(p jail.Profile, sp securityProbe) checkLine {
	ll := sp.Landlock
	l := checkLine{Name: "landlock"}
	switch {
	case len(ll.Failed) > 0:
		l.State = stateMissing
		l.Text = fmt.Sprintf("Landlock ABI %d restricted the child, but: %s", ll.ABI, strings.Join(ll.Failed, "; "))
		l.Fix = "the kernel's Landlock does not deny what it should: report this with the kernel version (uname -r)"
	case ll.Err != "":
		l.State = stateMissing
		if slices.Contains(p.AllowDegraded, "landlock") {
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

func checkSeccomp(p jail.Profile, sp securityProbe) checkLine {
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
