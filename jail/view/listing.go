package view

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/stamp"
)

// etcPython lists /etc's Python configuration (/etc/python3,
// /etc/python3.11): its names are only found by listing /etc, about 70 us
// of getdents for its 150 entries on every run's plan, which a server
// pays per request. The listing is kept while /etc's stamp says its
// entries are those listed.
var etcPython = &listing{dir: "/etc", prefix: "python3", now: time.Now}

// listing is the entries of dir whose names start with prefix, sorted,
// read again only when dir's stamp changes.
//
// Why a kept listing cannot be stale: a directory's entries change only
// with its mtime and ctime, which the kernel sets to the time of the
// change (ctime cannot be set by anyone: utimensat sets it to now too),
// and a directory renamed over dir has another device or inode. A
// listing is kept only when dir's times are settled at the stat before
// it was read (internal/stamp: git's "racily clean" rule): a change made
// after that stat then has a later time, and so another stamp. What would
// defeat it is the host's clock set back to within a tick of dir's last
// change and a change made then, in that tick.
type listing struct {
	dir, prefix string
	now         func() time.Time // time.Now; a test's clock

	mu    sync.Mutex
	stamp stamp.File // the stamp names were read under; zero: none kept
	names []string
	reads int // listings read, for the tests
}

// paths returns the listing's entries as paths (dir/name), as
// filepath.Glob(dir/prefix*) would: nil when dir cannot be read.
func (l *listing) paths() []string {
	started := l.now()
	var st unix.Stat_t
	if err := unix.Stat(l.dir, &st); err != nil {
		return nil
	}
	now := stamp.Of(&st)
	l.mu.Lock()
	defer l.mu.Unlock()
	if now == l.stamp {
		return l.joined()
	}
	l.stamp, l.names = stamp.File{}, nil
	names, err := l.read()
	if err != nil {
		return nil
	}
	if now.Settled(started) {
		l.stamp, l.names = now, names
	}
	return joinAll(l.dir, names)
}

// read lists dir's entries named prefix..., sorted.
func (l *listing) read() ([]string, error) {
	l.reads++
	f, err := os.Open(l.dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range all {
		if strings.HasPrefix(n, l.prefix) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

func (l *listing) joined() []string { return joinAll(l.dir, l.names) }

func joinAll(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}
