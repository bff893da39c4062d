package uidlease

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A Range is the inclusive span of host ids First..Last leases come from.
type Range struct{ First, Last uint32 }

// Default is the range when none is given: 1879048192-1879113727
// (0x70000000 + 65536). systemd reserves 524288-1879048191 for containers'
// user namespaces and 2147352576 (0x7FFE0000) up for its foreign range;
// the band between is unused by it, by distributions' accounts and by
// /etc/subuid's usual ranges (100000 up, 65536 each).
var Default = Range{First: 0x70000000, Last: 0x70000000 + 65535}

// ErrRange is wrapped by every error about a range that cannot be used:
// the caller maps it to bad input.
var ErrRange = errors.New("unusable uid range")

func (r Range) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// Size is how many ids the range holds.
func (r Range) Size() uint64 { return uint64(r.Last) - uint64(r.First) + 1 }

// Contains says whether id is in the range.
func (r Range) Contains(id uint64) bool { return id >= uint64(r.First) && id <= uint64(r.Last) }

// ParseRange reads FIRST-LAST (decimal, FIRST <= LAST).
func ParseRange(s string) (Range, error) {
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.ParseUint(a, 10, 32)
	last, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || first > last {
		return Range{}, fmt.Errorf("%w: %q: give FIRST-LAST, two host ids with FIRST <= LAST, e.g. %s", ErrRange, s, Default)
	}
	return Range{First: uint32(first), Last: uint32(last)}, nil
}

// reserved are the ids no lease may be: root, the overflow ids and the
// kernel's invalid id (-1 as uid_t).
var reserved = []struct {
	id   uint64
	name string
}{{0, "root"}, {65534, "nobody, the kernel's overflow id"}, {65535, "the 16-bit invalid id"}, {4294967295, "the invalid id (uid_t -1)"}}

// conflict is the first reason the range cannot be used, given the host's
// account files (their contents; nil: absent), or nil.
func conflict(r Range, passwd, group, subuid, subgid []byte) error {
	for _, x := range reserved {
		if r.Contains(x.id) {
			return fmt.Errorf("%w: %s includes id %d (%s)", ErrRange, r, x.id, x.name)
		}
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{"/etc/passwd", passwd}, {"/etc/group", group}} {
		if name, id, ok := accountIn(r, f.b); ok {
			return fmt.Errorf("%w: %s includes id %d of %q in %s", ErrRange, r, id, name, f.name)
		}
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{"/etc/subuid", subuid}, {"/etc/subgid", subgid}} {
		if line, ok := subIn(r, f.b); ok {
			return fmt.Errorf("%w: %s overlaps the subordinate ids %q of %s", ErrRange, r, line, f.name)
		}
	}
	return nil
}

// accountIn finds an entry of a passwd or group file (name:x:ID:...)
// whose id is in r.
func accountIn(r Range, b []byte) (string, uint64, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 4)
		if len(f) < 3 {
			continue
		}
		if id, err := strconv.ParseUint(f[2], 10, 32); err == nil && r.Contains(id) {
			return f[0], id, true
		}
	}
	return "", 0, false
}

// subIn finds an entry of /etc/subuid or /etc/subgid (owner:FIRST:COUNT)
// that overlaps r.
func subIn(r Range, b []byte) (string, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimSpace(line), ":")
		if len(f) != 3 {
			continue
		}
		start, err1 := strconv.ParseUint(f[1], 10, 32)
		count, err2 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil || count == 0 {
			continue
		}
		if start <= uint64(r.Last) && start+count-1 >= uint64(r.First) {
			return strings.TrimSpace(line), true
		}
	}
	return "", false
}

// Unmapped is the first id of r not mapped by an id map (the lines
// "inside outside count" of /proc/self/uid_map), if any: a jail in a
// container's user namespace can hand the analysis only ids mapped there.
func Unmapped(r Range, idMap []byte) (uint64, bool) {
	id := uint64(r.First)
	for id <= uint64(r.Last) {
		next := id
		for _, line := range strings.Split(string(idMap), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 {
				continue
			}
			start, err1 := strconv.ParseUint(f[0], 10, 32)
			count, err2 := strconv.ParseUint(f[2], 10, 32)
			if err1 == nil && err2 == nil && id >= start && id-start < count {
				next = start + count
				break
			}
		}
		if next == id {
			return id, true
		}
		id = next
	}
	return 0, false
}
