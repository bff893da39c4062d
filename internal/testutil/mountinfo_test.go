package testutil

import (
	"reflect"
	"strings"
	"testing"
)

func TestUnescape(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "/sys/fs/cgroup", "/sys/fs/cgroup"},
		{"space", `/mnt/my\040disk`, "/mnt/my disk"},
		{"tab", `/a\011b`, "/a\tb"},
		{"newline", `/a\012b`, "/a\nb"},
		{"backslash", `/a\134b`, `/a\b`},
		{"escaped backslash before digits", `/a\134040`, `/a\040`},
		{"hash", `/a\043b`, "/a#b"},
		{"several", `\040\011\012\134`, " \t\n\\"},
		{"at the end", `/x\040`, "/x "},
		{"too few digits", `/a\04`, `/a\04`},
		{"not octal", `/a\089`, `/a\089`},
		{"above a byte", `/a\777`, `/a\777`},
		{"lone backslash", `/a\`, `/a\`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Unescape(tt.in); got != tt.want {
				t.Errorf("Unescape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Mount
	}{
		{"proc(5) example", "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n",
			[]Mount{{ID: "36", Parent: "35", Dev: "98:0", Root: "/mnt1", Point: "/mnt2", Options: []string{"rw", "noatime"},
				Optional: []string{"master:1"}, FSType: "ext3", Source: "/dev/root", SuperOptions: []string{"rw", "errors=continue"}}}},
		{"no optional fields", "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
			[]Mount{{ID: "35", Parent: "31", Dev: "0:32", Root: "/", Point: "/sys/fs/cgroup/memory", Options: []string{"rw", "relatime"},
				FSType: "cgroup", Source: "cgroup", SuperOptions: []string{"rw", "memory"}}}},
		{"two optional fields", "40 31 0:37 / /sys/fs/cgroup/systemd rw shared:9 master:2 - cgroup cgroup rw,name=systemd",
			[]Mount{{ID: "40", Parent: "31", Dev: "0:37", Root: "/", Point: "/sys/fs/cgroup/systemd", Options: []string{"rw"},
				Optional: []string{"shared:9", "master:2"}, FSType: "cgroup", Source: "cgroup", SuperOptions: []string{"rw", "name=systemd"}}}},
		{"escaped space, tab, newline, backslash", `50 23 8:1 /data\040dir /mnt/a\011b\012c\134d rw - ext4 /dev/my\040disk rw`,
			[]Mount{{ID: "50", Parent: "23", Dev: "8:1", Root: "/data dir", Point: "/mnt/a\tb\nc\\d", Options: []string{"rw"},
				FSType: "ext4", Source: "/dev/my disk", SuperOptions: []string{"rw"}}}},
		{"cgroup root below the hierarchy's", `30 23 0:26 /kubepods/pod\0401 /sys/fs/cgroup ro - cgroup2 cgroup2 rw,nsdelegate`,
			[]Mount{{ID: "30", Parent: "23", Dev: "0:26", Root: "/kubepods/pod 1", Point: "/sys/fs/cgroup", Options: []string{"ro"},
				FSType: "cgroup2", Source: "cgroup2", SuperOptions: []string{"rw", "nsdelegate"}}}},
		{"empty source", "60 23 0:50 / /x rw - tmpfs  rw",
			[]Mount{{ID: "60", Parent: "23", Dev: "0:50", Root: "/", Point: "/x", Options: []string{"rw"},
				FSType: "tmpfs", Source: "", SuperOptions: []string{"rw"}}}},
		{"blank lines", "\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMountinfo(tt.in)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseMountinfo(%q) = %+v, %v, want %+v, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseMountinfoErrors(t *testing.T) {
	tests := []struct{ name, in string }{
		{"too few fields", "1 2 3 4 5 - cgroup"},
		{"no separator", "31 23 0:28 / /sys/fs/cgroup rw,relatime tmpfs tmpfs rw"},
		{"separator too early", "31 23 0:28 / - /x rw cgroup cgroup rw"},
		{"too few fields after the separator", "31 23 0:28 / /x rw - tmpfs tmpfs"},
		{"too many fields after the separator", "31 23 0:28 / /x rw - tmpfs tmpfs rw extra"},
		{"relative mount point", "31 23 0:28 / x rw - tmpfs tmpfs rw"},
		{"bad line after a good one", "31 23 0:28 / /x rw - tmpfs tmpfs rw\ngarbage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := ParseMountinfo(tt.in); err == nil {
				t.Errorf("ParseMountinfo(%q) = %+v, nil, want an error", tt.in, got)
			}
		})
	}
}

// TestReadMounts: this process's mount table parses, and holds / and /proc.
func TestReadMounts(t *testing.T) {
	ms, err := ReadMounts()
	if err != nil {
		t.Fatalf("ReadMounts() = %v, want nil", err)
	}
	var points []string
	for _, m := range ms {
		points = append(points, m.Point)
	}
	for _, want := range []string{"/", "/proc"} {
		if !strings.Contains(" "+strings.Join(points, " ")+" ", " "+want+" ") {
			t.Errorf("ReadMounts() mount points = %q, want %s among them", points, want)
		}
	}
}

// escape is what the kernel does to a mountinfo path (fs/proc_namespace.c,
// mangle): space, tab, newline and backslash as \ooo.
func escape(s string) string {
	r := strings.NewReplacer(`\`, `\134`, " ", `\040`, "\t", `\011`, "\n", `\012`)
	return r.Replace(s)
}

// FuzzParseMountinfo: the parser reads what the kernel hands us and must not
// panic on any of it; a line built from escaped fields parses back to them.
func FuzzParseMountinfo(f *testing.F) {
	f.Add("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue", "/a b", "/c\td", "src")
	f.Add(`50 23 8:1 /data\040dir /mnt/a\134b rw - ext4 /dev/sda1 rw`, `/x\y`, "/\n", "")
	f.Add("1 2 3 4 5 - cgroup", "/", "/", "-")
	f.Fuzz(func(t *testing.T, data, root, point, source string) {
		ParseMountinfo(data)
		if !strings.HasPrefix(root, "/") || !strings.HasPrefix(point, "/") {
			return
		}
		line := "1 0 0:1 " + escape(root) + " " + escape(point) + " rw shared:1 - tmpfs " + escape(source) + " rw,size=1k"
		ms, err := ParseMountinfo(line)
		if err != nil {
			t.Fatalf("ParseMountinfo(%q) = %v, want nil", line, err)
		}
		if len(ms) != 1 || ms[0].Root != root || ms[0].Point != point || ms[0].Source != source {
			t.Fatalf("ParseMountinfo(%q) = %+v, want root %q, point %q, source %q", line, ms, root, point, source)
		}
	})
}
