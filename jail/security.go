package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scidex/scidex-jail/landlock"
	"github.com/scidex/scidex-jail/seccomp"
)

// securityConfig is what the init enforces on itself, and so on the target,
// after the mount view and the identity drop. A nil policy is a layer the
// caller disabled by name.
type securityConfig struct {
	Landlock *landlock.Policy `json:"landlock,omitempty"`
	Seccomp  *seccomp.Policy  `json:"seccomp,omitempty"`
}

// enforcedInit is what the init applied, for the report.
type enforcedInit struct {
	Landlock *landlock.Result `json:"landlock,omitempty"`
	Seccomp  *SeccompReport   `json:"seccomp,omitempty"`
}

// etcReadable is the part of /etc an interpreter and its libraries read:
// the loader, users and groups for getpwuid, name service and time zone,
// TLS roots, Debian's alternatives links, fonts and Python's and
// matplotlib's site configuration. The rest (shadow, ssh keys, the
// platform's own configuration) stays unreadable.
var etcReadable = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group",
	"/etc/nsswitch.conf", "/etc/localtime", "/etc/timezone", "/etc/hosts", "/etc/host.conf",
	"/etc/gai.conf", "/etc/protocols", "/etc/services", "/etc/ssl", "/etc/ca-certificates",
	"/etc/alternatives", "/etc/fonts", "/etc/mime.types", "/etc/os-release", "/etc/debian_version",
	"/etc/locale.alias", "/etc/matplotlibrc", "/etc/jupyter", "/etc/ipython", "/etc/magic",
	"/etc/mailcap", "/etc/xdg",
}

// devicesRW are the device files the target may read, write and ioctl.
var devicesRW = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts"}

// landlockPolicy is the run's Landlock policy. Its paths are paths in the
// mount view, which binds every host path at the same place.
func (sv *supervisor) landlockPolicy(host hostView, ro, rw []string) *landlock.Policy {
	s := sv.spec
	if s.disabled("landlock") {
		return nil
	}
	// Fail closed is decided per promise (holdPromises) before the init
	// exists: Landlock then enforces what this kernel offers, and refuses
	// only if it finds less than the ABI that decision relied on.
	p := &landlock.Policy{
		ReadOnly:      append([]string{"/proc"}, ro...),
		ReadWrite:     append([]string{sv.dir.path, "/dev/shm"}, rw...),
		Scope:         true,
		AllowDegraded: true,
		MinABI:        sv.landlockABI,
	}
	for _, e := range host.system {
		if e.Symlink == "" && e.Path != "/etc" {
			p.ReadExec = append(p.ReadExec, e.Path)
		}
	}
	p.ReadExec = append(p.ReadExec, host.extras...)
	etc := append([]string{}, etcReadable...)
	if host.dns != "" {
		etc = append(etc, host.dns)
	}
	py, _ := filepath.Glob("/etc/python3*")
	for _, f := range append(etc, py...) {
		if _, err := os.Stat(f); err == nil {
			p.ReadExec = append(p.ReadExec, f)
		}
	}
	for _, d := range devicesRW {
		if _, err := os.Stat(d); err == nil {
			p.Devices = append(p.Devices, d)
		}
	}
	if s.Net == NetHost {
		// Only in host mode is there a network to reach; in the other
		// modes the namespace is the fence, and loopback servers (a
		// notebook's kernel) need bind, which HandleTCP denies.
		p.HandleTCP = true
		p.ConnectTCP = s.AllowTCP
	}
	return p
}

func (sv *supervisor) seccompPolicy() *seccomp.Policy {
	if sv.spec.disabled("seccomp") {
		return nil
	}
	return &seccomp.Policy{Name: "default", Net: seccomp.NetMode(sv.spec.Net)}
}

// checkSecurity fails before anything is spawned when a layer cannot be
// had at all, with the message of the layer's own package.
func checkSecurity(c *securityConfig) error {
	if c.Seccomp != nil {
		if _, err := seccomp.Lookup(*c.Seccomp); err != nil {
			return fmt.Errorf("seccomp policy %s: %w", c.Seccomp, err)
		}
	}
	// The Landlock policy is validated where it is applied, in the init
	// (Restrict validates first): its paths are the mount view's, and a
	// failure there is a setup error with stage "landlock" all the same.
	return nil
}

// applyLandlock runs in the init after the identity drop.
func applyLandlock(c *securityConfig, e *enforcedInit) error {
	if c.Landlock == nil {
		return nil
	}
	res, err := c.Landlock.Restrict()
	if err != nil {
		if errors.Is(err, landlock.ErrUnsupported) {
			return fmt.Errorf("%w (the supervisor found more: the promises were decided on it, so the run does not start)", err)
		}
		return err
	}
	e.Landlock = &res
	return nil
}

// applySeccomp runs in the init as its last step before the target.
func applySeccomp(c *securityConfig, e *enforcedInit) error {
	if c.Seccomp == nil {
		return nil
	}
	prog, err := seccomp.Lookup(*c.Seccomp)
	if err != nil {
		return err
	}
	if err := prog.Load(); err != nil {
		return err
	}
	e.Seccomp = &SeccompReport{Policy: c.Seccomp.String(), Arch: prog.Arch, SHA256: prog.SHA256, Denied: prog.Denied()}
	return nil
}

// SeccompReport is the filter in force.
type SeccompReport struct {
	Policy string   `json:"policy"` // rule set / network mode
	Arch   string   `json:"arch"`
	SHA256 string   `json:"sha256"` // of the loaded BPF program
	Denied []string `json:"denied"`
}

func (sv *supervisor) recordSecurity(e *enforcedInit) {
	r := &sv.rep.Enforced
	if e == nil {
		return
	}
	if l := e.Landlock; l != nil {
		r.Landlock = &LandlockReport{ABI: l.ABI, Required: l.Required, Rules: l.Rules, Degraded: l.Degraded}
		if r.Landlock.Degraded == nil {
			r.Landlock.Degraded = []string{}
		}
	}
	r.Seccomp = e.Seccomp
}

// resolvConf is /etc/resolv.conf when it is a file in /etc, or its target
// when it is a link out of /etc (systemd-resolved: /run/systemd/resolve/...),
// which the mount view then binds read-only, as the one file of /run the
// run sees. Landlock checks the resolved path. "" when there is none.
func resolvConf() string {
	p, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}
