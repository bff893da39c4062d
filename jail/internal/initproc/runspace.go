package initproc

import (
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// budgetMount is where the run's budget tmpfs is mounted for a moment,
// while its two directories are bound out of it; then it is detached and
// its mount point removed, so no path in the view leads to it.
const budgetMount = newRoot + "/.scidex-budget"

// mountRunSpace lays out the analysis' writable space: the run directory
// (its outputs, the cwd) and the scratch (HOME, TMPDIR, caches: never an
// output).
//
// With a disk budget both are directories of one tmpfs of that size, bound
// at their places: a cache fills the same budget as the outputs, and the
// supervisor, which lists the run directory through /proc/<init>/root,
// sees the run directory's tree only. Without one the run directory is
// the host's (bound with the other binds) and the scratch a tmpfs of its
// own, whose pages the kernel charges to the run's memory cgroup.
func mountRunSpace(p *protocol.Mounts) error {
	insideOwner := "mode=0700,uid=" + strconv.Itoa(protocol.InsideUID) + ",gid=" + strconv.Itoa(protocol.InsideUID)
	runDir, scratch := newRoot+p.RunDir, newRoot+p.Scratch
	if p.RunDirBytes > 0 {
		opts := insideOwner + ",size=" + strconv.FormatInt(p.RunDirBytes, 10)
		if err := mkdirMount("tmpfs", budgetMount, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return err
		}
		src := budgetMount + "/scratch"
		if p.KeepScratch {
			src = budgetMount + "/run/" + protocol.ScratchKeptName
		}
		for _, b := range [][2]string{{budgetMount + "/run", runDir}, {src, scratch}} {
			if err := bindDir(b[0], b[1]); err != nil {
				return err
			}
		}
		// The two binds hold the tmpfs; the budget's own mount goes.
		if err := unix.Unmount(budgetMount, unix.MNT_DETACH); err != nil {
			return wrap.Error("detach "+budgetMount, err)
		}
		if err := unix.Rmdir(budgetMount); err != nil {
			return wrap.Error("remove "+budgetMount, err)
		}
	} else if p.KeepScratch {
		if err := bindDir(runDir+"/"+protocol.ScratchKeptName, scratch); err != nil {
			return err
		}
	} else {
		opts := insideOwner
		if p.ScratchBytes > 0 {
			opts += ",size=" + strconv.FormatInt(p.ScratchBytes, 10)
		}
		if err := mkdirMount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return err
		}
	}
	// TMPDIR must exist: Python's tempfile, finding it missing and /tmp
	// read-only, falls back to the cwd, the run directory.
	if err := unix.Mkdir(newRoot+p.ScratchTmp, 0o700); err != nil {
		return wrap.Error("create "+p.ScratchTmp, err)
	}
	return nil
}

// bindDir makes the directory src, fresh (mode 0700, owned by the init's
// uid, which is the analysis'), and binds it at dst. src is in a tree the
// init made itself or in the fresh run directory, where nothing else has
// run yet: an existing entry is an error, never reused.
func bindDir(src, dst string) error {
	if err := unix.Mkdir(src, 0o700); err != nil {
		return wrap.Error("create "+src, err)
	}
	if err := mkdirAll(dst); err != nil {
		return wrap.Error("create mount point "+dst, err)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return wrap.Error("bind "+src+" on "+dst, err)
	}
	return nil
}

// makeLinks makes the run directory's links (./data to the data dir's
// host path): links, not binds, so that what a script reads through them
// is the host path's own bind, under its own Landlock rule. Landlock adds
// up the rights of every directory above a file: below the writable run
// directory a bind would inherit its write right, and only its read-only
// mount would refuse a write. The run directory is fresh: nothing is
// there to replace.
func makeLinks(p *protocol.Mounts) error {
	for _, l := range p.Links {
		if err := symlink(l.Target, newRoot+p.RunDir+"/"+l.Name); err != nil {
			return wrap.Error("link ./"+l.Name+" in the run directory", err)
		}
	}
	return nil
}
