package testutil

import (
	"fmt"
	"os"
	"strings"
)

// Mount is one line of /proc/PID/mountinfo, its paths unescaped.
type Mount struct {
	ID, Parent   string   // mount IDs
	Dev          string   // major:minor
	Root         string   // the path in the filesystem shown at Point (for cgroups: a cgroup path)
	Point        string   // where it is mounted
	Options      []string // per-mount options (rw, nosuid, ...)
	Optional     []string // optional fields: shared:N, master:N, ...
	FSType       string   // e.g. cgroup, cgroup2, tmpfs
	Source       string   // e.g. /dev/sda1, none
	SuperOptions []string // per-superblock options; the controllers of a cgroup v1 hierarchy
}

// ParseMountinfo parses mountinfo (proc(5)), one mount per line:
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// ID, parent ID, major:minor, root, mount point, mount options, zero or more
// optional fields ended by "-", filesystem type, source, super options.
// Root, mount point and source are unescaped ([Unescape]). A line that does
// not have this shape is an error naming it.
func ParseMountinfo(data string) ([]Mount, error) {
	var out []Mount
	for n, line := range strings.Split(data, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMountLine(line)
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d %q: %w", n+1, line, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func parseMountLine(line string) (Mount, error) {
	// The kernel writes exactly one space between fields and escapes the
	// spaces inside them; an empty source stays an empty field.
	f := strings.Split(line, " ")
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 {
		return Mount{}, fmt.Errorf("no \"-\" field after the six fixed ones")
	}
	post := f[sep+1:]
	if len(post) != 3 {
		return Mount{}, fmt.Errorf("%d fields after the separator, want 3 (type, source, super options)", len(post))
	}
	m := Mount{
		ID: f[0], Parent: f[1], Dev: f[2],
		Root:         Unescape(f[3]),
		Point:        Unescape(f[4]),
		Options:      strings.Split(f[5], ","),
		Optional:     f[6:sep],
		FSType:       post[0],
		Source:       Unescape(post[1]),
		SuperOptions: strings.Split(post[2], ","),
	}
	if len(m.Optional) == 0 {
		m.Optional = nil
	}
	if !strings.HasPrefix(m.Root, "/") || !strings.HasPrefix(m.Point, "/") {
		return Mount{}, fmt.Errorf("root %q or mount point %q is not an absolute path", m.Root, m.Point)
	}
	return m, nil
}

// Unescape undoes the kernel's escaping of mountinfo fields: a byte the
// kernel escapes (space, tab, newline, backslash; '#' too in some versions)
// is written as a backslash and three octal digits. Anything else, a
// backslash not followed by three octal digits included, is itself.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if v, ok := octalByte(s[i:]); ok {
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// octalByte reads `\ooo` at the start of s: a byte value, so at most \377.
func octalByte(s string) (byte, bool) {
	if len(s) < 4 || s[0] != '\\' {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[1:4]) {
		if c < '0' || c > '7' {
			return 0, false
		}
		v = v*8 + int(c-'0')
	}
	if v > 0xff {
		return 0, false
	}
	return byte(v), true
}

// ReadMounts parses this process's /proc/self/mountinfo.
func ReadMounts() ([]Mount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	ms, err := ParseMountinfo(string(b))
	if err != nil {
		return nil, fmt.Errorf("parse /proc/self/mountinfo: %w", err)
	}
	return ms, nil
}
