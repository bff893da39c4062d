package uidlease

import (
	"os"
	"strings"
	"testing"
)

// TestClearFilesKept: a range and files found clear are not parsed again
// while they stay the same, byte for byte; any change is parsed, and an
// account added in the range is found.
func TestClearFilesKept(t *testing.T) {
	passwd := "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n"
	group := "root:x:0:\n"
	clash := passwd + "svc:x:1001:1001::/:/bin/sh\n" // in the range below
	r := Range{1001, 2000}
	var c clearFiles
	steps := []struct {
		name           string
		r              Range
		passwd, subuid string
		want           string // in the error; "" = none
		parsed         int
	}{
		{"first", r, passwd, "", "", 1},
		{"the same", r, passwd, "", "", 1},
		{"an account added in the range", r, clash, "", `id 1001 of "svc"`, 2},
		{"the account still there", r, clash, "", `id 1001 of "svc"`, 3},
		{"gone again: the files kept", r, passwd, "", "", 3},
		{"subuid made", r, passwd, "bob:1500:10\n", "/etc/subuid", 4},
		{"subuid emptied: the files kept", r, passwd, "", "", 4},
		{"another range", Range{3000, 4000}, passwd, "", "", 5},
		{"the first range: the files kept are the other's", r, passwd, "", "", 6},
	}
	for _, s := range steps {
		err := c.conflict(s.r, []byte(s.passwd), []byte(group), []byte(s.subuid), nil)
		switch {
		case s.want == "" && err != nil:
			t.Errorf("%s: conflict(%s) = %v, want nil", s.name, s.r, err)
		case s.want != "" && (err == nil || !strings.Contains(err.Error(), s.want)):
			t.Errorf("%s: conflict(%s) = %v, want an error naming %q", s.name, s.r, err, s.want)
		}
		if c.parsed != s.parsed {
			t.Errorf("%s: files parsed %d times, want %d", s.name, c.parsed, s.parsed)
		}
	}
}

// TestOwnMapsReadOnce: the process's maps are read once, as the kernel
// gives them; the range last found mapped is mapped again, and no other.
func TestOwnMapsReadOnce(t *testing.T) {
	var m userMaps
	for i := range 2 {
		got, err := m.read()
		if err != nil {
			t.Fatalf("read() = %v", err)
		}
		for j, name := range ownMapFiles {
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if string(got[j]) != string(want) {
				t.Errorf("read() (call %d)[%s] = %q, want %q", i+1, name, got[j], want)
			}
		}
	}
	a, b := Range{First: 100000, Last: 100009}, Range{First: 200000, Last: 200009}
	steps := []struct {
		name   string
		set    *Range
		r      Range
		mapped bool
	}{
		{"none found yet", nil, a, false},
		{"a found mapped", &a, a, true},
		{"another range", nil, b, false},
		{"b found mapped: a no longer kept", &b, a, false},
		{"b", nil, b, true},
	}
	for _, s := range steps {
		if s.set != nil {
			m.setMapped(*s.set)
		}
		if got := m.isMapped(s.r); got != s.mapped {
			t.Errorf("%s: isMapped(%s) = %v, want %v", s.name, s.r, got, s.mapped)
		}
	}
}
