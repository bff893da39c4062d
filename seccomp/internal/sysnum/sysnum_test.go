package sysnum

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, src string
		want      map[string]uint32
		err       bool
	}{
		{"constants", "package unix\n\nconst (\n\tSYS_READ = 0\n\tSYS__SYSCTL      = 156\n\tSYS_OPEN_TREE_ATTR = 467\n)\n",
			map[string]uint32{"read": 0, "_sysctl": 156, "open_tree_attr": 467}, false},
		{"not a number", "\tSYS_READ = x\n", nil, true},
		{"negative", "\tSYS_READ = -1\n", nil, true},
		{"twice", "\tSYS_READ = 0\n\tSYS_READ = 1\n", nil, true},
		{"empty", "package unix\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.src))
			if (err != nil) != tt.err {
				t.Fatalf("Parse(%q) = %v, %v; want error %v", tt.src, got, err, tt.err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("Parse(%q) = %v, want %v", tt.src, got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("Parse(%q)[%s] = %d, want %d", tt.src, k, got[k], v)
				}
			}
		})
	}
}

// TestReadAgreesWithUnix: the file read is the one compiled in, for the
// running architecture.
func TestReadAgreesWithUnix(t *testing.T) {
	nums, err := Read(runtime.GOARCH)
	if err != nil {
		t.Fatalf("Read(%s) = %v", runtime.GOARCH, err)
	}
	for name, want := range map[string]uint32{"read": unix.SYS_READ, "openat": unix.SYS_OPENAT, "clone3": unix.SYS_CLONE3, "open_tree_attr": unix.SYS_OPEN_TREE_ATTR} {
		if got, ok := nums[name]; !ok || got != want {
			t.Errorf("Read(%s)[%s] = %d, %v; want %d", runtime.GOARCH, name, got, ok, want)
		}
	}
}
