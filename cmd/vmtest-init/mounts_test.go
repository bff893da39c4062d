package main

import (
	"fmt"
	"testing"
)

func TestOutermost(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"none", nil, nil},
		{"go test binary and cwd", []string{"/work/main/cgroupfs", "/tmp/go-build1/b001"}, []string{"/tmp/go-build1/b001"}},
		{"nested kept once", []string{"/tmp/a/b", "/tmp/a", "/tmp/a/b/c"}, []string{"/tmp/a"}},
		{"siblings with a common prefix", []string{"/tmp/ab", "/tmp/a"}, []string{"/tmp/a", "/tmp/ab"}},
		{"duplicates and dots", []string{"/tmp/x/", "/tmp/./x", "/tmp/y/../x"}, []string{"/tmp/x"}},
		{"/tmp itself is not kept", []string{"/tmp", "/tmp/"}, nil},
		{"escapes are not under /tmp", []string{"/tmp/../etc"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outermost(tt.paths); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("outermost(%q) = %q, want %q", tt.paths, got, tt.want)
			}
		})
	}
}

func TestSplitLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a.ko\nb.ko\n", []string{"a.ko", "b.ko"}},
		{"a.ko\n\nb.ko", []string{"a.ko", "b.ko"}},
	}
	for _, tt := range tests {
		if got := splitLines(tt.in); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
