package view

import (
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// systemEntries are hostSystemEntries' look at /'s system directories,
// kept while /'s stamp stays (dirLook): 8 lstats and 4 readlinks of every
// run's plan, a server's every request. What they find is a pure function
// of /'s entries: whether each name is there, and whether it is a
// directory or a symbolic link, and the link's target. A directory entry
// is made, removed or renamed only with its directory's mtime and ctime
// set (a directory renamed over / is another inode); an inode's type
// never changes, and a link's target is written only when the link is
// made (a link "changed" by ln -sf is a new one, in place of the old:
// / changes). A mount on one of them leaves a directory (a mount point
// is one, and a file cannot be bound over it), and mount(2) follows a
// link to its target.
var systemEntries = &dirLook[protocol.SystemEntry]{dir: "/", now: time.Now, look: func() ([]protocol.SystemEntry, bool) {
	return hostSystemEntries(), true
}}

// devices are LookHost's look at DevicesRW (which exist, links followed),
// kept while /dev's stamp stays, as systemEntries are, unless one of them
// is a link: its target, elsewhere, could come and go under the same
// /dev. A device node bound over one (a container's /dev) is over a file
// that exists.
var devices = &dirLook[string]{dir: "/dev", now: time.Now, look: func() ([]string, bool) {
	keep := true
	var out []string
	for _, d := range DevicesRW {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			keep = false
			if _, err := os.Stat(d); err != nil {
				continue
			}
		}
		out = append(out, d)
	}
	return out, keep
}}

// dirLook is a look at some of dir's entries (look), done again only
// when dir's stamp changes, on listing's rule (listing.go): the look is
// kept only when dir's times were racyStamp older than the stat before
// it, and when look says it may be (false: what it found depends on
// more than dir's entries). Each call returns a copy of its own.
type dirLook[E any] struct {
	dir  string
	now  func() time.Time // time.Now; a test's clock
	look func() ([]E, bool)

	mu    sync.Mutex
	stamp dirStamp // the stamp the kept look was made under; zero: none kept
	kept  []E
	looks int // looks made, for the tests
}

func (d *dirLook[E]) get() []E {
	started := d.now()
	var st unix.Stat_t
	if err := unix.Stat(d.dir, &st); err != nil {
		v, _ := d.look()
		return v
	}
	stamp := stampOf(&st)
	d.mu.Lock()
	defer d.mu.Unlock()
	if stamp == d.stamp {
		return slices.Clone(d.kept)
	}
	d.stamp, d.kept = dirStamp{}, nil
	d.looks++
	v, keep := d.look()
	if keep && settledBefore(&st, started) {
		d.stamp, d.kept = stamp, slices.Clone(v)
	}
	return v
}

// settledBefore says whether st's times are racyStamp older than t.
func settledBefore(st *unix.Stat_t, t time.Time) bool {
	changed := time.Unix(st.Mtim.Unix()).Add(racyStamp)
	if c := time.Unix(st.Ctim.Unix()).Add(racyStamp); c.After(changed) {
		changed = c
	}
	return changed.Before(t)
}
