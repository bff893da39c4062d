package runfiles

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultIgnore are the names of the caches tools keep in the working
// directory, which are never outputs: hypothesis' example database,
// pytest's cache, Jupyter's checkpoints, Python's bytecode (where a tool
// ignores PYTHONDONTWRITEBYTECODE), mypy's and ruff's caches. An entry so
// named, at any depth, is not listed, not entered, not hashed, not
// collected, and not counted against the entry budget. It still takes
// room on the run directory's disk budget (a tmpfs the kernel counts):
// the ignore list hides nothing from disk_used_bytes or a disk_limit.
var DefaultIgnore = []string{".hypothesis", ".pytest_cache", ".ipynb_checkpoints", "__pycache__", ".mypy_cache", ".ruff_cache"}

// CheckIgnore checks a list of names to ignore: each a name (no slash),
// never "." or "..", at most 255 bytes, no NUL, given once.
func CheckIgnore(names []string) error {
	for i, n := range names {
		switch {
		case n == "" || n == "." || n == "..":
			return fmt.Errorf("%q is not the name of an entry: give a name such as .tox", n)
		case strings.ContainsAny(n, "/\x00"):
			return fmt.Errorf("%q: give a name (no slash), matched at any depth, such as .tox", n)
		case len(n) > 255:
			return fmt.Errorf("%.32q...: a name is at most 255 bytes", n)
		case slices.Contains(names[:i], n):
			return fmt.Errorf("%q is given twice", n)
		}
	}
	return nil
}

// jailLink reports whether n, at the top of the run directory dfd, is
// still the jail's own link (Budget.Links): one the analysis replaced is
// its own, and listed.
func (l *lister) jailLink(dfd int, n string) bool {
	target, ok := l.b.Links[n]
	return ok && readLink(dfd, n) == target
}

// ignored reports whether the listing skips the name n.
func (l *lister) ignored(n string) bool { return slices.Contains(l.b.Ignore, n) }
