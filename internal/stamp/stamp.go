// Package stamp is the rule by which a value computed from files may be
// kept while the files' stat(2) stamps stay the same: git's "racily
// clean" rule. A change to a file or a directory's entries sets its
// modification and change times to the time of the change, from a clock
// that ticks every few milliseconds (and file systems that keep coarser
// times round them to up to two seconds): a change made in the tick of
// the stat that took a stamp could leave the same stamp. So a stamp is
// trusted only when the times it holds are Racy older than the stat: a
// change after it then has a later time, and another stamp.
//
// It imports no package of this module (view's host looks, uidlease's
// account files and egress' hosts file all keep what they read by it,
// each under a File stamp).
package stamp

import (
	"time"

	"golang.org/x/sys/unix"
)

// Racy is how much older than the stat that took a stamp its times must
// be for it to be trusted: many clock ticks, and the two seconds of the
// coarsest timestamps a file system keeps.
const Racy = 2 * time.Second

// Settled says whether a file's modification and change times are both
// Racy older than t, the time taken before the stat that read them.
func Settled(mtime, ctime unix.Timespec, t time.Time) bool {
	limit := t.Add(-Racy)
	return time.Unix(mtime.Unix()).Before(limit) && time.Unix(ctime.Unix()).Before(limit)
}

// A File is what stat(2) says of a file or directory that changes when
// its content or its entries do: another inode renamed over its name, a
// write (size and times), an entry added or removed (a directory's times).
type File struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime unix.Timespec
}

// Of is st's stamp.
func Of(st *unix.Stat_t) File {
	return File{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim, Ctime: st.Ctim}
}

// Settled is Settled of f's times: t is the time taken before the stat.
func (f File) Settled(t time.Time) bool { return Settled(f.Mtime, f.Ctime, t) }
