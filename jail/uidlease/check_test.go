package uidlease

import (
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
