package view

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/landlock"
)

// HostView is everything a run takes from the host it runs on, looked at
// once, by LookHost, before the plan is made: BuildPlan is a pure function
// of a Spec and a HostView, so a plan can be built and checked without
// root, and the host is looked at in one place only.
type HostView struct {
	EUID, EGID  int                    // who runs the jail: root maps the analysis to Spec.HostUID, others to themselves
	Groups      []report.HostGroup     // rootless: the caller's supplementary groups, which the run keeps (groups.go)
	OverflowUID int                    // the uid an unmapped owner shows as inside (nobody)
	OverflowGID int                    // the gid an unmapped group or owner shows as inside (nogroup)
	Exposed     []ExposedPath          // rootless with groups kept: the paths the view shows, for the group rule (exposure.go)
	System      []protocol.SystemEntry // /usr, /bin, /lib*, /etc: directories to bind, links to recreate
	Extras      []string               // caches outside the system dirs, bound read-only when present
	DNS         string                 // resolv.conf's resolved path (a network mode with a resolver only: Wanted.Resolver)
	ResolvFile  bool                   // /etc/resolv.conf is a regular file, not a link: a mode's own can be laid over it
	DataDirs    []string               // the Spec's data dirs that exist under its root (absolute)
	Etc         []string               // the readable /etc entries that exist (EtcReadable, Python's)
	Devices     []string               // the device files of DevicesRW that exist
	Layers      promise.HostLayers     // what the kernel offers the promises (Landlock ABI); BuildPlan adds the spec's part
}

// Wanted is what of a run decides what LookHost looks at: whether its
// network mode has a resolver to reach, its root and data dirs, the host
// paths it binds, and whether it has Landlock at all.
type Wanted struct {
	Resolver         bool // the network mode's row says (netmode.Mode.Resolver)
	Root             string
	DataDirs         []string // relative to Root
	ReadOnly         []string
	ReadWrite        []string
	LandlockDisabled bool
}

// LookHost looks at the host for a run that wants w.
func LookHost(w Wanted) HostView {
	h := HostView{
		EUID: os.Geteuid(), EGID: os.Getegid(),
		System: systemEntries.get(), Extras: existingDirs(varExtras),
		Layers: lookLayers(w.LandlockDisabled),
	}
	h.OverflowUID, h.OverflowGID = OverflowID("uid"), OverflowID("gid")
	h.Groups = LookGroups(h.EUID)
	if w.Resolver {
		h.DNS = resolvConf()
	}
	if fi, err := os.Lstat("/etc/resolv.conf"); err == nil && fi.Mode().IsRegular() {
		h.ResolvFile = true
	}
	for _, d := range w.DataDirs {
		p := filepath.Join(w.Root, d)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			h.DataDirs = append(h.DataDirs, p)
		}
	}
	h.Etc = etcFound()
	h.Devices = devices.get()
	// Last: it looks at what the view exposes, all of it found above.
	h.Exposed = lookExposed(w, &h)
	return h
}

// lookLayers finds what this host's kernel offers the promises: its
// Landlock ABI, asked of the kernel, not guessed from its version (not asked
// at all when the run switches Landlock off).
func lookLayers(off bool) promise.HostLayers {
	var h promise.HostLayers
	if off {
		return h
	}
	abi, err := landlock.ProbeABI()
	h.LandlockABI = abi
	var ue *landlock.UnsupportedError
	switch {
	case abi > 0:
	case errors.As(err, &ue):
		h.LandlockErr, h.LandlockFix = ue.Finding(), ue.Fix()
	case err != nil:
		h.LandlockErr = err.Error()
	}
	return h
}

// systemDirs are what an interpreter needs from the host. /etc is bound whole
// and read-only; Landlock narrows what of it can be read.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

func hostSystemEntries() []protocol.SystemEntry {
	var out []protocol.SystemEntry
	for _, p := range systemDirs {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				out = append(out, protocol.SystemEntry{Path: p, Symlink: t})
			}
			continue
		}
		if fi.IsDir() {
			out = append(out, protocol.SystemEntry{Path: p})
		}
	}
	return out
}

// varExtras are caches outside the system dirs that save every run work:
// without fontconfig's, matplotlib rebuilds it into the run directory (about
// 0.1 s and 50 KB of the disk budget each time). Bound read-only when present.
var varExtras = []string{"/var/cache/fontconfig"}

func existingDirs(paths []string) []string {
	out := []string{}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
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

// EtcReadable is the part of /etc an interpreter and its libraries read:
// the loader, users and groups for getpwuid, name service and time zone,
// TLS roots, Debian's alternatives links, fonts and Python's and
// matplotlib's site configuration. The rest (shadow, ssh keys, the
// platform's own configuration) stays unreadable; so does /etc/ssl/private
// (group ssl-cert, which PostgreSQL's account is in and which a rootless
// run keeps: exposure.go).
var EtcReadable = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group",
	"/etc/nsswitch.conf", "/etc/localtime", "/etc/timezone", "/etc/hosts", "/etc/host.conf",
	"/etc/gai.conf", "/etc/protocols", "/etc/services", "/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates",
	"/etc/alternatives", "/etc/fonts", "/etc/mime.types", "/etc/os-release", "/etc/debian_version",
	"/etc/locale.alias", "/etc/matplotlibrc", "/etc/jupyter", "/etc/ipython", "/etc/magic",
	"/etc/mailcap", "/etc/xdg",
}

// DevicesRW are the device files the target may read, write and ioctl.
var DevicesRW = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts"}
