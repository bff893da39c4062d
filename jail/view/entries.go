package view

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/stamp"
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
var systemEntries = &dirLook[protocol.SystemEntry]{dirs: []string{"/"}, now: time.Now, look: func() ([]protocol.SystemEntry, bool) {
	return hostSystemEntries(), true
}}

// devices are LookHost's look at DevicesRW (which exist, links followed),
// kept while /dev's stamp stays, as systemEntries are, unless one of them
// is a link: its target, elsewhere, could come and go under the same
// /dev. A device node bound over one (a container's /dev) is over a file
// that exists.
var devices = &dirLook[string]{dirs: []string{"/dev"}, now: time.Now, look: func() ([]string, bool) {
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

// etcEntries are LookHost's look at EtcReadable and /etc's Python
// entries (which exist, links followed), kept while the stamps of the
// directories they are in (/etc, /etc/ssl) stay, as systemEntries are:
// 28 stats of every run's plan. An entry that is a link (/etc/localtime)
// is kept as one, and its target looked at on every call (etcFound).
// The directories are stat'ed through their links: one replaced, or a
// link among them retargeted, is another inode.
var etcEntries = &dirLook[etcEntry]{dirs: parents(EtcReadable), now: time.Now, look: lookEntries(func() []string {
	return append(slices.Clone(EtcReadable), etcPython.paths()...)
})}

// etcEntry is an entry there, and whether it is a link.
type etcEntry struct {
	path string
	link bool
}

// lookEntries is a look at which of paths() are there (lstat), and which
// of them are links.
func lookEntries(paths func() []string) func() ([]etcEntry, bool) {
	return func() ([]etcEntry, bool) {
		var out []etcEntry
		for _, f := range paths() {
			fi, err := os.Lstat(f)
			if err != nil {
				continue
			}
			out = append(out, etcEntry{path: f, link: fi.Mode()&os.ModeSymlink != 0})
		}
		return out, true
	}
}

// etcFound is the /etc entries that exist (etcEntries, followLinks).
func etcFound() []string { return followLinks(etcEntries.get()) }

// followLinks is the entries that exist, the links among them followed
// now: a link's target may come and go with no change to the directory
// the link is in.
func followLinks(entries []etcEntry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.link && !exists(e.path) {
			continue
		}
		out = append(out, e.path)
	}
	return out
}

// exists is os.Stat's err == nil without its FileInfo (a request's look
// follows every link among the /etc entries).
func exists(path string) bool {
	var st unix.Stat_t
	for {
		err := unix.Stat(path, &st)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// parents are the directories paths are in, each once, in order.
func parents(paths []string) []string {
	var out []string
	for _, p := range paths {
		if d := filepath.Dir(p); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// dirLook is a look at some of the entries of dirs (look), done again
// only when one of the directories changes its stamp, on listing's rule
// (listing.go): the look is kept only when every directory's times were
// settled at the stats before it (internal/stamp), and when look says it may be
// (false: what it found depends on more than the directories' entries).
// Each call returns a copy of its own.
type dirLook[E any] struct {
	dirs []string
	now  func() time.Time // time.Now; a test's clock
	look func() ([]E, bool)

	mu     sync.Mutex
	stamps []stamp.File // the stamps the kept look was made under; nil: none kept
	kept   []E
	looks  int // looks made, for the tests
}

func (d *dirLook[E]) get() []E {
	started := d.now()
	stamps := make([]stamp.File, len(d.dirs))
	settled := true
	for i, dir := range d.dirs {
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			v, _ := d.look()
			return v
		}
		stamps[i] = stamp.Of(&st)
		settled = settled && stamps[i].Settled(started)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stamps != nil && slices.Equal(stamps, d.stamps) {
		return slices.Clone(d.kept)
	}
	d.stamps, d.kept = nil, nil
	d.looks++
	v, keep := d.look()
	if keep && settled {
		d.stamps, d.kept = stamps, slices.Clone(v)
	}
	return v
}
