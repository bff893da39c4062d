package view

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/scidex/scidex-jail/jail/report"
)

// The group rule. A rootless run keeps its caller's supplementary groups
// (groups.go), and the kernel grants them their rights on every host file
// the view shows. The view (mount view and Landlock) decides which host
// paths the run sees at all; what it must not do is show one that a kept
// group opens and others cannot, since a run as root (which clears the
// groups) would not reach it, and the profile did not mean a group's
// files. So before anything exists, a rootless run that keeps groups
// other than its own gid looks at each path the view exposes, at the
// level the view names it:
//
//   - the system directories bound whole (/usr, /lib*, ...), the caches
//     and resolv.conf bound beside them;
//   - the /etc entries Landlock lets the run read; when the run has no
//     Landlock, everything in /etc, at every depth: the mount view binds it
//     whole, and its group files lie deep (/etc/ssl/private, group
//     ssl-cert). About 1,500 entries, a few milliseconds, and only in that
//     degraded case;
//   - the data dirs, --ro and --rw paths.
//
// A path whose group is a kept group, owned by someone else, whose mode
// gives that group a right others lack (0750, 0640, 0770, ...), refuses
// the run (a *GroupExposureError, stage promises, exit 125). Below those
// paths (but /etc without Landlock) nothing is read: the trees are what
// the caller chose to show (a data dir whole, /usr as the distribution
// ships it), and a scan of /usr on every run would cost more than the run. What a kept group opens below
// an exposed path is the caller's to know; what it opens elsewhere stays
// out of the view. The system /etc entries are listed narrowly for the
// same reason (/etc/ssl/certs, not /etc/ssl with its private/ of group
// ssl-cert). ACLs are not read: a group ACL entry is not seen by this rule.

// ExposedPath is one host path the run's view shows, as stat found it
// (following links, as the bind does).
type ExposedPath struct {
	Path     string
	UID, GID int
	Mode     fs.FileMode // permission bits
}

// keepsGroups says whether a rootless run keeps a group besides its own
// gid, and so needs the rule.
func keepsGroups(h *HostView) bool {
	if h.EUID == 0 {
		return false
	}
	for _, g := range h.Groups {
		if g.GID != h.EGID {
			return true
		}
	}
	return false
}

// lookExposed stats the paths the view of a run of s on h exposes (see
// the group rule above); nil unless the run keeps groups. A path that is
// missing is left out: the run's own checks say so.
func lookExposed(w Wanted, h *HostView) []ExposedPath {
	if !keepsGroups(h) {
		return nil
	}
	var paths []string
	for _, e := range h.System {
		if e.Symlink == "" && e.Path != "/etc" {
			paths = append(paths, e.Path)
		}
	}
	paths = append(paths, h.Extras...)
	if h.DNS != "" {
		paths = append(paths, h.DNS)
	}
	var out []ExposedPath
	if h.Layers.LandlockABI > 0 {
		paths = append(paths, h.Etc...)
	} else {
		out = walkExposed("/etc")
	}
	paths = append(paths, h.DataDirs...)
	paths = append(paths, w.ReadOnly...)
	paths = append(paths, w.ReadWrite...)
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			out = appendExposed(out, p, fi)
		}
	}
	return out
}

// walkExposed is every entry of the tree at root but links (a link's
// target is where the view shows it, or nowhere). A directory the caller
// cannot read is not entered: nor can the analysis.
func walkExposed(root string) []ExposedPath {
	var out []ExposedPath
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			out = appendExposed(out, p, fi)
		}
		return nil
	})
	return out
}

func appendExposed(out []ExposedPath, p string, fi fs.FileInfo) []ExposedPath {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out = append(out, ExposedPath{Path: p, UID: int(st.Uid), GID: int(st.Gid), Mode: fi.Mode().Perm()})
	}
	return out
}

// CheckExposure applies the group rule to the exposed paths of a run as
// uid:gid on the host keeping groups: the first path one of the kept
// groups opens and others cannot is a *GroupExposureError.
func CheckExposure(uid, gid int, groups []report.HostGroup, exposed []ExposedPath) error {
	for _, p := range exposed {
		if p.UID == uid {
			continue // the owner's bits apply to the caller, not the group's
		}
		for _, g := range groups {
			if g.GID == gid || g.GID != p.GID {
				continue
			}
			if groupOnly(p.Mode) != 0 {
				return &GroupExposureError{Group: g, Path: p, HostUID: uid, HostGID: gid}
			}
		}
	}
	return nil
}

// groupOnly is the rights (rwx, as 0-7) mode gives its group and not
// others.
func groupOnly(m fs.FileMode) fs.FileMode {
	return (m >> 3 & 7) &^ (m & 7)
}

// GroupExposureError is a rootless run refused because its view would
// show a path that a supplementary group it cannot drop opens and others
// cannot.
type GroupExposureError struct {
	Group            report.HostGroup
	Path             ExposedPath
	HostUID, HostGID int
}

func (e *GroupExposureError) Error() string {
	return e.Finding() + "; to run it: " + e.Fix()
}

// Finding says what was found: the group, the path and why it matters.
func (e *GroupExposureError) Finding() string {
	name := e.groupName()
	return fmt.Sprintf("promises fs_read and fs_write cannot hold with the supplementary group %s (gid %d) kept: "+
		"the run's view shows %s (mode %04o, group %s), which that group opens and others cannot, "+
		"and a rootless run cannot drop its caller's groups (setgroups is denied in an unprivileged user namespace)",
		name, e.Group.GID, e.Path.Path, e.Path.Mode, name)
}

// Fix says how to run anyway, each way keeping the promises.
func (e *GroupExposureError) Fix() string {
	return fmt.Sprintf("start the jail without the group (as root: setpriv --reuid=%d --regid=%d --clear-groups scidex-jail run ...; "+
		"a systemd service: no SupplementaryGroups= for it), or do not show the path to the run, "+
		"or give it to the caller's own group (chgrp) or to others (chmod o+rX)", e.HostUID, e.HostGID)
}

func (e *GroupExposureError) groupName() string {
	if e.Group.Name == "" {
		return fmt.Sprint(e.Group.GID)
	}
	return e.Group.Name
}
