package runfiles

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// An Anchor is a run directory made before its run has a name: fresh,
// locked, marked and owned as CreateDir makes one, under a temporary
// .new name in its tmp-root, which a sweep leaves alone while it is
// locked and takes once its maker is gone. Claim names it for its run
// (one rename); a slot of scidex-jail serve makes its run's ahead, so
// that no inode is made on the request's way.
type Anchor struct {
	tmpRoot  string
	parent   *os.File // the tmp-root; nil once claimed or discarded
	tmp      string   // its name in the tmp-root until claimed
	lock     *os.File
	uid, gid int
}

// PrepareAnchor makes an anchor in tmpRoot owned by uid:gid, named for
// its maker (name: a slot's own, never a run's ID).
func PrepareAnchor(tmpRoot, name string, uid, gid int) (*Anchor, error) {
	if err := CheckID(name); err != nil {
		return nil, fmt.Errorf("bug: anchor name %q: %w", name, err)
	}
	return prepareAnchor(tmpRoot, DirName(name), uid, gid)
}

func prepareAnchor(tmpRoot, name string, uid, gid int) (*Anchor, error) {
	parent, err := os.OpenFile(tmpRoot, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open tmp-root %s: %w", tmpRoot, err)
	}
	tmp, lock, err := newLockedDir(int(parent.Fd()), name, uid, gid)
	if err != nil {
		parent.Close()
		return nil, fmt.Errorf("create run directory in %s: %w", tmpRoot, err)
	}
	return &Anchor{tmpRoot: tmpRoot, parent: parent, tmp: tmp, lock: lock, uid: uid, gid: gid}, nil
}

// ErrOtherDevice: Claim's tmp-root is on another file system than the
// anchor, which a rename cannot cross.
var ErrOtherDevice = errors.New("the tmp-root is on another file system than the run directory made ahead")

// For says whether the anchor can be the run directory of a run owned by
// uid:gid (in any tmp-root on its file system: Claim).
func (a *Anchor) For(uid, gid int) bool {
	return a != nil && a.parent != nil && a.uid == uid && a.gid == gid
}

// Discard removes an anchor never claimed (nil, or claimed: nothing).
func (a *Anchor) Discard() error {
	if a == nil || a.parent == nil {
		return nil
	}
	err := unix.Unlinkat(int(a.parent.Fd()), a.tmp, unix.AT_REMOVEDIR)
	a.lock.Close()
	a.parent.Close()
	a.parent, a.lock = nil, nil
	if err != nil {
		return fmt.Errorf("remove the run directory made ahead in %s: %w", a.tmpRoot, err)
	}
	return nil
}
