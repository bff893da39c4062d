package jail

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
	DNS         string                 // resolv.conf's resolved path (host network mode only)
	DataDirs    []string               // the Spec's data dirs that exist under its root (absolute)
	Etc         []string               // the readable /etc entries that exist (etcReadable, Python's)
	Devices     []string               // the device files of devicesRW that exist
	Layers      promise.HostLayers     // what the kernel offers the promises (Landlock ABI); BuildPlan adds the spec's part
}

// LookHost looks at the host for a run of s.
func LookHost(s *Spec) HostView {
	h := HostView{
		EUID: os.Geteuid(), EGID: os.Getegid(),
		System: hostSystemEntries(), Extras: existingDirs(varExtras),
		Layers: lookLayers(s),
	}
	h.OverflowUID, h.OverflowGID = overflowID("uid"), overflowID("gid")
	h.Groups = lookGroups(h.EUID)
	if s.Net == promise.NetHost {
		// Only host mode has a resolver to reach.
		h.DNS = resolvConf()
	}
	for _, d := range s.DataDirs {
		p := filepath.Join(s.Root, d)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			h.DataDirs = append(h.DataDirs, p)
		}
	}
	py, _ := filepath.Glob("/etc/python3*")
	for _, f := range append(append([]string{}, etcReadable...), py...) {
		if _, err := os.Stat(f); err == nil {
			h.Etc = append(h.Etc, f)
		}
	}
	for _, d := range devicesRW {
		if _, err := os.Stat(d); err == nil {
			h.Devices = append(h.Devices, d)
		}
	}
	// Last: it looks at what the view exposes, all of it found above.
	h.Exposed = lookExposed(s, &h)
	return h
}

// lookLayers finds what this host's kernel offers the promises: its
// Landlock ABI, asked of the kernel, not guessed from its version (not asked
// at all when s switches Landlock off).
func lookLayers(s *Spec) promise.HostLayers {
	var h promise.HostLayers
	if s.disabled(promise.ProtectLandlock) {
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
