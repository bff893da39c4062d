//go:build cgo

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/seccomp/internal/rules"
)

// checkedIn is where go generate writes, relative to this package.
const checkedIn = "../../bpf"

// TestGeneratedUpToDate compiles the rules again and compares every file
// with the checked-in one: a rule changed without go generate ./seccomp
// fails here.
func TestGeneratedUpToDate(t *testing.T) {
	fresh, err := generateAll()
	if err != nil {
		t.Fatalf("generateAll() = %v", err)
	}
	var names []string
	for name := range fresh {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(checkedIn, name))
		if err != nil {
			t.Errorf("read checked-in %s: %v (run go generate ./seccomp)", name, err)
			continue
		}
		if !bytes.Equal(got, fresh[name]) {
			t.Errorf("checked-in %s (%d bytes) differs from a fresh generation (%d bytes); run go generate ./seccomp", name, len(got), len(fresh[name]))
			if name == summaryFile {
				t.Logf("checked in:\n%s\nfresh:\n%s", got, fresh[name])
			}
		}
	}
	stale, err := filepath.Glob(filepath.Join(checkedIn, "*.bpf"))
	if err != nil {
		t.Fatalf("list %s: %v", checkedIn, err)
	}
	for _, p := range stale {
		if _, ok := fresh[filepath.Base(p)]; !ok {
			t.Errorf("checked-in %s is not generated any more; run go generate ./seccomp", p)
		}
	}
}

// TestGenerateIsDeterministic guards the comparison above: two runs in one
// process must agree byte for byte.
func TestGenerateIsDeterministic(t *testing.T) {
	a, err := generateAll()
	if err != nil {
		t.Fatalf("generateAll() = %v", err)
	}
	b, err := generateAll()
	if err != nil {
		t.Fatalf("generateAll() again = %v", err)
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("generateAll()[%s] differs between two runs", name)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct{ name, policy, net, arch string }{
		{"unknown policy", "strict", "none", "amd64"},
		{"unknown net mode", "default", "wifi", "amd64"},
		{"unknown arch", "default", "none", "riscv64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := generate(tt.policy, tt.net, tt.arch); err == nil {
				t.Errorf("generate(%s, %s, %s) = nil error, want an error", tt.policy, tt.net, tt.arch)
			}
		})
	}
}

// TestGenerateRefusesUnclassified: a syscall x/sys/unix names that the
// table does not classify stops the generator, which names it, rather
// than leaving the decision to the default.
func TestGenerateRefusesUnclassified(t *testing.T) {
	saved := rules.Allowed
	t.Cleanup(func() { rules.Allowed = saved })
	rules.Allowed = slices.DeleteFunc(slices.Clone(saved), func(n string) bool { return n == "mseal" })
	for _, arch := range rules.Arches {
		if _, err := generate("default", "none", arch); err == nil || !strings.Contains(err.Error(), "does not classify: mseal;") {
			t.Errorf("generate(default, none, %s) without mseal in rules.Allowed = %v, want an error naming mseal", arch, err)
		}
	}
}
