package uidlease

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// Check refuses a range the host's account files or its user namespace
// give a reason not to use (see conflict and unmapped). It looks at the
// account files each time it is called, and reads them unless their
// stamps (stat(2): inode, size, times) are those it last found clear for
// the range, settled (accountFiles, stamp.go): any write changes a
// file's stamp. What it finds in the bytes is kept too (clearFiles): the
// same range and the same bytes again are found clear again without
// parsing them. Its own user namespace's maps, which cannot change, are
// read once (ownMaps).
func Check(r Range) error {
	own, err := ownMaps.read()
	if err != nil {
		return fmt.Errorf("check uid range %s: %w", r, err)
	}
	if err := hostAccounts.check(r); err != nil {
		return err
	}
	if ownMaps.isMapped(r) {
		return nil
	}
	for i, m := range ownMapFiles {
		if id, ok := Unmapped(r, own[i]); ok {
			return fmt.Errorf("%w: %s includes id %d, which is not mapped in the user namespace the jail runs in (%s: %s): in a container, give a range of ids it maps that no account of the container uses (Kubernetes hostUsers: false maps 65536 from 0; runc, podman and LXC map subordinate ids from /etc/subuid and /etc/subgid)", ErrRange, r, id, m, strings.Join(strings.Fields(string(own[i])), " "))
		}
	}
	ownMaps.setMapped(r)
	return nil
}

// ownMapFiles are the maps ownMaps reads, in its order.
var ownMapFiles = [2]string{"/proc/self/uid_map", "/proc/self/gid_map"}

// ownMaps are this process's uid_map and gid_map, read once: a user
// namespace's maps are written once, and a process with more than one
// thread (a Go program always has several) can neither join nor make
// another user namespace (setns(2) and unshare(2) refuse CLONE_NEWUSER
// to it), so they cannot change while it runs. A read that fails is
// tried again at the next call.
var ownMaps userMaps

// The last range found mapped in both is kept too (mapped): Unmapped is
// a pure function of the range and the maps, so the same range is
// mapped again (a server checks every request's range, and each parsed
// both maps).
type userMaps struct {
	mu     sync.Mutex
	maps   [2][]byte // ownMapFiles'; nil: absent
	done   bool
	mapped *Range // nil: none found mapped yet
}

// read is the two maps (ownMapFiles'), shared: the caller reads them.
func (m *userMaps) read() ([2][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		var own [2][]byte
		for i, name := range ownMapFiles {
			b, err := sysfile.Read(name)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return [2][]byte{}, err
			}
			own[i] = b
		}
		m.maps, m.done = own, true
	}
	return m.maps, nil
}

// isMapped says whether r is the range last found mapped in both maps.
func (m *userMaps) isMapped(r Range) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mapped != nil && *m.mapped == r
}

func (m *userMaps) setMapped(r Range) {
	m.mu.Lock()
	m.mapped = &r
	m.mu.Unlock()
}

// clearFiles remembers the last range and account files that conflict
// found clear: conflict is a pure function of them, so the same range
// and files, byte for byte (as read for this call), are clear again; a
// server checks every request's range against the same files, and the
// parse of passwd and group was half of Check's time (~15 us).
type clearFiles struct {
	mu     sync.Mutex
	r      Range
	files  [4][]byte // passwd, group, subuid, subgid; nil: none kept
	kept   bool
	parsed int // conflict's calls, for the tests
}

// conflict is the package's conflict, skipped when r and the files are
// the last ones it found clear.
func (c *clearFiles) conflict(r Range, passwd, group, subuid, subgid []byte) error {
	files := [4][]byte{passwd, group, subuid, subgid}
	c.mu.Lock()
	same := c.kept && c.r == r
	for i := range files {
		same = same && bytes.Equal(c.files[i], files[i])
	}
	c.mu.Unlock()
	if same {
		return nil
	}
	c.mu.Lock()
	c.parsed++
	c.mu.Unlock()
	if err := conflict(r, passwd, group, subuid, subgid); err != nil {
		return err
	}
	c.mu.Lock()
	c.r, c.files, c.kept = r, files, true
	c.mu.Unlock()
	return nil
}
