package runfiles

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/limits"
)

// ListOutputs walks the run directory without following any link: regular
// files get a size and a sha256, links are listed with their target as
// text, anything else is listed by type. It is the supervisor's read of
// hostile input, so:
//
//   - every name is a name: the walk is getdents and *at calls on the
//     directory fds it holds, one per level of the current path, never
//     io/fs (which refuses names that are not UTF-8 and stops there) and
//     never a path walked again from the top (quadratic in the depth);
//   - it is iterative, so no tree is deep enough to exhaust a stack;
//   - it is bounded by b: the entries it lists (and so the report and its
//     own memory), the bytes it hashes, and through ctx its time; an entry
//     past a budget says so in Skipped, and the first one is returned as
//     over;
//   - ctx is looked at between entries and between chunks of a file, so a
//     cancel ends it within a chunk's read.
//
// The error is non-nil only when the run directory itself cannot be read;
// a cancel returns what was listed and ctx's error.
func ListOutputs(ctx context.Context, dir string, b Budget) ([]Output, *OverBudget, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return []Output{}, nil, fmt.Errorf("open run directory %s: %w", dir, err)
	}
	l := &lister{ctx: ctx, b: b, outs: []Output{}}
	names, err := l.readDir(fd, "", -1)
	if err != nil {
		unix.Close(fd)
		return l.outs, nil, fmt.Errorf("list run directory %s: %w", dir, err)
	}
	l.stack = []frame{{fd: fd, names: names}}
	l.walk()
	return l.outs, l.over, ctx.Err()
}

// frame is one open directory on the current path.
type frame struct {
	fd     int
	prefix string // its path with a trailing slash; "" for the top
	names  []string
	next   int
}

type lister struct {
	ctx     context.Context
	b       Budget
	outs    []Output
	stack   []frame
	charged int64 // entries counted: listed and read but not yet listed
	hashed  int64 // bytes hashed
	over    *OverBudget
}

// walk lists the tree in pre-order, names sorted bytewise in each
// directory, as a recursive walk would.
func (l *lister) walk() {
	defer func() {
		for _, f := range l.stack {
			unix.Close(f.fd)
		}
		l.stack = nil
	}()
	for len(l.stack) > 0 {
		top := &l.stack[len(l.stack)-1]
		if top.next == len(top.names) {
			unix.Close(top.fd)
			l.stack = l.stack[:len(l.stack)-1]
			continue
		}
		name := top.names[top.next]
		top.names[top.next] = "" // listed: its memory is the entry's now
		top.next++
		if l.stopped() {
			return
		}
		if child, ok := l.entry(top.fd, top.prefix, name); ok {
			l.stack = append(l.stack, child)
		}
	}
}

// stopped reports whether ctx ended the walk; the time budget is a budget
// like the others, a cancel is not.
func (l *lister) stopped() bool {
	err := l.ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) && l.over == nil {
		l.over = &OverBudget{Budget: "time", Limit: l.b.Time.String(), Size: -1}
		if n := len(l.outs); n > 0 {
			l.over.Path = l.outs[n-1].Path
		}
	}
	return err != nil
}

// entry lists one name of the directory dfd; for a directory it can enter,
// it returns the frame to walk next.
func (l *lister) entry(dfd int, prefix, name string) (frame, bool) {
	o := Output{Path: prefix + name, Type: OutputOther}
	defer func() {
		o.setLossless()
		l.outs = append(l.outs, o)
	}()
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		o.Skipped = "not read: lstat: " + err.Error()
		return frame{}, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		o.Type = OutputDir
		return l.enter(dfd, name, &st, &o)
	case unix.S_IFLNK:
		o.Type = OutputSymlink
		l.linkTarget(readLink(dfd, name), &o)
	case unix.S_IFREG:
		o.Type, o.Size = OutputFile, st.Size
		l.hash(dfd, name, &st, &o)
	}
	return frame{}, false
}

// linkTarget records a link's target, which costs the entry budget as its
// path does (up to PATH_MAX bytes each, written in the report): one that
// does not fit is left out, saying so.
func (l *lister) linkTarget(target string, o *Output) {
	extra := int64(len(target) / pathWeight)
	if l.b.Entries > 0 && l.charged+extra > l.b.Entries {
		o.Skipped = "link target not listed: over the entry budget"
		o.overBudget = true
		if l.over == nil {
			l.over = &OverBudget{Budget: "entries", Limit: fmt.Sprint(l.b.Entries), Path: o.Path, Size: int64(len(target))}
		}
		return
	}
	l.charged += extra
	o.Target = target
}

// enter opens the directory name of dfd, checks it is still the one just
// looked at (not swapped for a link or another directory since), and reads
// its names within the entry budget.
func (l *lister) enter(dfd int, name string, st *unix.Stat_t, o *Output) (frame, bool) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		o.Skipped = "not listed: open: " + err.Error()
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			o.Skipped = "not listed: it changed while it was listed (no longer a directory)"
		}
		return frame{}, false
	}
	if !sameFile(fd, st) {
		unix.Close(fd)
		o.Skipped = "not listed: it changed while it was listed"
		return frame{}, false
	}
	prefix := o.Path + "/"
	names, err := l.readDir(fd, prefix, l.remaining())
	if err != nil {
		unix.Close(fd)
		o.Skipped = "not listed: read: " + err.Error()
		return frame{}, false
	}
	if l.over != nil && l.over.Budget == "entries" && strings.HasPrefix(l.over.Path, prefix) {
		o.Skipped = "not every entry listed: over the entry budget"
	}
	return frame{fd: fd, prefix: prefix, names: names}, true
}

// remaining is how many more entries the budget admits (-1: no budget).
func (l *lister) remaining() int64 {
	if l.b.Entries == 0 {
		return -1
	}
	return max(l.b.Entries-l.charged, 0)
}

// readDir reads the names of the directory fd, sorted, at most max+1 of
// them (max -1: all), and charges them to the entry budget; the first one
// that does not fit, and every one after it, is dropped, and recorded as
// the entry that crossed the budget. Reading more than max+1 would only
// hold memory for names that will not be listed.
func (l *lister) readDir(fd int, prefix string, max int64) ([]string, error) {
	buf := make([]byte, 32<<10)
	var names []string
	// Skipped names (the ignored caches; at the top, the jail's own
	// links) are dropped as they are read, before the count that stops
	// the reading and before the budget sees them.
	skipped := l.ignored
	if prefix == "" && len(l.b.Links) > 0 {
		skipped = func(n string) bool { return l.ignored(n) || l.jailLink(fd, n) }
	}
	for max < 0 || int64(len(names)) <= max {
		if err := l.ctx.Err(); err != nil {
			return names, nil // walk's next look at ctx ends it
		}
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		read := len(names)
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		// Only the new names are looked at.
		names = append(names[:read], slices.DeleteFunc(names[read:], skipped)...)
	}
	slices.Sort(names)
	for i, name := range names {
		cost := entryCost(len(prefix) + len(name))
		if l.b.Entries > 0 && l.charged+cost > l.b.Entries {
			if l.over == nil {
				l.over = &OverBudget{Budget: "entries", Limit: fmt.Sprint(l.b.Entries), Path: prefix + name, Size: lstatSize(fd, name)}
			}
			return names[:i], nil
		}
		l.charged += cost
	}
	return names, nil
}

// hash hashes the regular file name of dfd within the byte budgets, or
// says in o why it did not.
func (l *lister) hash(dfd int, name string, st *unix.Stat_t, o *Output) {
	switch size := st.Size; {
	case l.b.FileBytes > 0 && size > l.b.FileBytes:
		o.Skipped = fmt.Sprintf("not hashed or copied: over the budget of %s for one file", limits.SizeWords(l.b.FileBytes))
		l.overBytes("file_bytes", l.b.FileBytes, o)
		return
	case l.b.Bytes > 0 && l.hashed+size > l.b.Bytes:
		o.Skipped = fmt.Sprintf("not hashed or copied: over the budget of %s hashed in all", limits.SizeWords(l.b.Bytes))
		l.overBytes("bytes", l.b.Bytes, o)
		return
	}
	f, err := openRegularAt(dfd, name, st)
	if err != nil {
		o.Skipped = "not hashed or copied: " + err.Error()
		return
	}
	defer f.Close()
	sum, err := hashExactly(l.ctx, f, st.Size)
	l.hashed += st.Size
	if err != nil {
		o.Skipped = "not hashed or copied: " + err.Error()
		if l.ctx.Err() != nil {
			o.Skipped = "not hashed or copied: the post-run work was stopped while it was hashed"
		}
		return
	}
	o.SHA256 = sum
}

func (l *lister) overBytes(budget string, limit int64, o *Output) {
	o.overBudget = true
	if l.over == nil {
		l.over = &OverBudget{Budget: budget, Limit: limits.SizeWords(limit), Path: o.Path, Size: o.Size}
	}
}

// sameFile reports whether fd is the file st describes.
func sameFile(fd int, st *unix.Stat_t) bool {
	var now unix.Stat_t
	return unix.Fstat(fd, &now) == nil && now.Dev == st.Dev && now.Ino == st.Ino && now.Mode&unix.S_IFMT == st.Mode&unix.S_IFMT
}

// readLink reads a link's target: at most PATH_MAX bytes, which is all
// the kernel lets one hold.
func readLink(dfd int, name string) string {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dfd, name, buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// lstatSize is the apparent size of name in dfd (0 when it cannot be read).
func lstatSize(dfd int, name string) int64 {
	var st unix.Stat_t
	if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0
	}
	return st.Size
}

// setLossless keeps names that are not UTF-8 exactly: JSON strings are
// UTF-8, so encoding/json writes such a path with U+FFFD in place of each
// bad byte, which no longer names the file and can make two names look
// alike. The exact bytes go, base64, into PathB64 (TargetB64).
func (o *Output) setLossless() {
	if !utf8.ValidString(o.Path) {
		o.PathB64 = base64.StdEncoding.EncodeToString([]byte(o.Path))
	}
	if !utf8.ValidString(o.Target) {
		o.TargetB64 = base64.StdEncoding.EncodeToString([]byte(o.Target))
	}
}
