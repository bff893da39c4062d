package runfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/scidex/scidex-jail/internal/fspath"
)

// Host paths a caller gives (the root, the inputs, the read-only and
// read-write paths, the collect directory, the report) are normalised before anything uses them: absolute, every
// symbolic link resolved, no "." or "..", so that what the checks compare,
// what is mounted and what the report shows are one and the same path.
// Resolution is physical: "a/../b" where a is a link to /x/y means /x/b,
// as the kernel would walk it, not the lexical b.

// jailOwnTrees are the jail's own in the mount view (a fresh /proc, a
// minimal /dev, no /sys): a host path there is never an input.
var jailOwnTrees = []string{"/proc", "/sys", "/dev"}

// NormalInput resolves an input path, which must exist; name is what the
// user wrote to give it (--ro, profiles.z.read_only), for the messages.
func NormalInput(name, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: %s %q must be an absolute path", ErrBadSpec, name, p)
	}
	n, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %s %q does not exist: create it or leave it out", ErrBadSpec, name, p)
		}
		return "", fmt.Errorf("%w: %s %q cannot be resolved: %w", ErrBadSpec, name, p, err)
	}
	for _, t := range jailOwnTrees {
		if fspath.Within(n, t) {
			return "", fmt.Errorf("%w: %s %q (%s) is under %s, which the jail makes its own (a fresh /proc, a minimal /dev, no /sys): give a path outside /proc, /sys and /dev", ErrBadSpec, name, p, n, t)
		}
	}
	return n, nil
}

// NormalDest resolves a destination path, which need not exist yet: the
// longest existing prefix is resolved and the rest appended, cleaned.
// A rest holding ".." is refused: it cannot be resolved before it exists.
// name is what the user wrote to give it, for the messages.
func NormalDest(name, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: %s %q must be an absolute path", ErrBadSpec, name, p)
	}
	// Split by hand: filepath.Dir would clean "a/.." lexically.
	head, rest := strings.TrimRight(p, "/"), []string{}
	for {
		if head == "" {
			head = "/"
		}
		n, err := filepath.EvalSymlinks(head)
		if err == nil {
			for _, r := range rest {
				if r == ".." {
					return "", fmt.Errorf("%w: %s %q: \"..\" after a directory that does not exist yet: give the path without it", ErrBadSpec, name, p)
				}
			}
			return filepath.Join(append([]string{n}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || head == "/" {
			return "", fmt.Errorf("%w: %s %q cannot be resolved: %w", ErrBadSpec, name, p, err)
		}
		i := strings.LastIndexByte(head, '/')
		if base := head[i+1:]; base != "" && base != "." {
			rest = append([]string{base}, rest...)
		}
		head = strings.TrimRight(head[:i], "/")
	}
}

// insideRunDir reports the run directory p is in, if any: a destination
// must never be inside every run directory of the
// tmp-root (scidex-analysis-*, any ID, this run's own included) and every
// half-made one (.scidex-analysis-*.new). tmpRoot is resolved.
func insideRunDir(p, tmpRoot string) (string, bool) {
	if !fspath.Within(p, tmpRoot) || p == tmpRoot {
		return "", false
	}
	rel := strings.TrimPrefix(p, tmpRoot)
	rel = strings.TrimPrefix(rel, "/")
	first, _, _ := strings.Cut(rel, "/")
	if strings.HasPrefix(first, DirPrefix) || (strings.HasPrefix(first, "."+DirPrefix) && strings.HasSuffix(first, ".new")) {
		return filepath.Join(tmpRoot, first), true
	}
	return "", false
}
