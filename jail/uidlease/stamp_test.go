package uidlease

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAccountStampsKept: account files found clear for a range are not
// read again while their stamps stay and are settled; an edit in place,
// a file replaced, made or removed, another range, or times too recent
// to trust, and they are read (and an account added is found).
func TestAccountStampsKept(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(path(name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	passwd := "root:x:0:0:root:/root:/bin/bash\n"
	clash := passwd + "svc:x:1001:1001::/:/bin/sh\n" // in r
	write("passwd", passwd)
	write("group", "root:x:0:\n")
	write("subgid", "")
	r := Range{1001, 2000}
	later := func() time.Time { return time.Now().Add(time.Hour) } // every file's times settled
	a := accountFiles{paths: [4]string{path("passwd"), path("group"), path("subuid"), path("subgid")}, now: later}
	steps := []struct {
		name   string
		change func()
		r      Range
		want   string // in the error; "" = none
		reads  int
	}{
		{"first", func() {}, r, "", 1},
		{"the same", func() {}, r, "", 1},
		{"again", func() {}, r, "", 1},
		{"an account added in place", func() { write("passwd", clash) }, r, `id 1001 of "svc"`, 2},
		{"still there: a refusal is never kept", func() {}, r, `id 1001 of "svc"`, 3},
		{"removed in place", func() { write("passwd", passwd) }, r, "", 4},
		{"the same after it", func() {}, r, "", 4},
		{"passwd replaced by a rename", func() {
			write("passwd.new", passwd)
			if err := os.Rename(path("passwd.new"), path("passwd")); err != nil {
				t.Fatal(err)
			}
		}, r, "", 5},
		{"subuid made", func() { write("subuid", "bob:1500:10\n") }, r, "subuid", 6},
		{"subuid removed", func() { os.Remove(path("subuid")) }, r, "", 7},
		{"the same without it", func() {}, r, "", 7},
		{"another range", func() {}, Range{3000, 4000}, "", 8},
		{"the first range again", func() {}, r, "", 9},
		{"written just now, as it was: read", func() { a.now = time.Now; write("group", "root:x:0:\n") }, r, "", 10},
		{"too recent to trust: read again", func() {}, r, "", 11},
		{"and again", func() {}, r, "", 12},
		{"settled: read once more, then kept", func() { a.now = later }, r, "", 13},
		{"kept", func() {}, r, "", 13},
	}
	for _, s := range steps {
		s.change()
		err := a.check(s.r)
		switch {
		case s.want == "" && err != nil:
			t.Errorf("%s: check(%s) = %v, want nil", s.name, s.r, err)
		case s.want != "" && (err == nil || !strings.Contains(err.Error(), s.want)):
			t.Errorf("%s: check(%s) = %v, want an error naming %q", s.name, s.r, err, s.want)
		}
		if a.reads != s.reads {
			t.Errorf("%s: files read %d times, want %d", s.name, a.reads, s.reads)
		}
	}
}
