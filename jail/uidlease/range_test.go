package uidlease

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Range
		ok   bool
	}{
		{"1879048192-1879113727", Default, true},
		{"5-5", Range{5, 5}, true},
		{"0-4294967295", Range{0, 4294967295}, true},
		{"6-5", Range{}, false},
		{"5", Range{}, false},
		{"-5", Range{}, false},
		{"5-", Range{}, false},
		{"a-b", Range{}, false},
		{"1-4294967296", Range{}, false},
		{" 1-2", Range{}, false},
	} {
		got, err := ParseRange(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v, ok %t", c.in, got, err, c.want, c.ok)
		}
		if err != nil && !errors.Is(err, ErrRange) {
			t.Errorf("ParseRange(%q) = %v, want an error wrapping ErrRange", c.in, err)
		}
	}
}

func TestConflict(t *testing.T) {
	passwd := "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nalice:x:1000:1000::/home/alice:/bin/sh\n# a comment\nbroken\n"
	group := "root:x:0:\nlab:x:3000:alice\n"
	subuid := "alice:100000:65536\n"
	subgid := "alice:200000:65536\n"
	for _, c := range []struct {
		name string
		r    Range
		want string // in the error; "" = none
	}{
		{"the default", Default, ""},
		{"root", Range{0, 10}, "includes id 0 (root)"},
		{"nobody", Range{65000, 65534}, "id 65534"},
		{"the 16-bit invalid id", Range{65535, 65535}, "id 65535"},
		{"uid_t -1", Range{4294967200, 4294967295}, "id 4294967295"},
		{"an account", Range{999, 1001}, `id 1000 of "alice" in /etc/passwd`},
		{"a group", Range{2000, 3000}, `id 3000 of "lab" in /etc/group`},
		{"subuid's start", Range{90000, 100000}, `"alice:100000:65536" of /etc/subuid`},
		{"subuid's last", Range{165535, 170000}, "/etc/subuid"},
		{"just past subuid", Range{165536, 170000}, ""},
		{"subgid inside", Range{210000, 210001}, "/etc/subgid"},
		{"between", Range{1001, 2999}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := conflict(c.r, []byte(passwd), []byte(group), []byte(subuid), []byte(subgid))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("conflict(%s) = %v, want nil", c.r, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrRange)):
				t.Errorf("conflict(%s) = %v, want an ErrRange naming %q", c.r, err, c.want)
			}
		})
	}
}

func TestUnmapped(t *testing.T) {
	for _, c := range []struct {
		name  string
		idMap string
		r     Range
		want  uint64
		found bool
	}{
		{"the initial namespace", "         0          0 4294967295\n", Default, 0, false},
		{"a pod's 65536", "0 1879048192 65536\n", Default, 1879048192, true},
		{"inside a pod's", "0 1879048192 65536\n", Range{1000, 2000}, 0, false},
		{"past its end", "0 100000 65536\n", Range{65000, 65536}, 65536, true},
		{"two lines, contiguous", "0 100000 1000\n1000 500000 1000\n", Range{500, 1500}, 0, false},
		{"two lines, a gap", "0 100000 1000\n1001 500000 1000\n", Range{500, 1500}, 1000, true},
		{"empty", "", Range{1, 1}, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, found := Unmapped(c.r, []byte(c.idMap))
			if got != c.want || found != c.found {
				t.Errorf("Unmapped(%s, %q) = %d, %t; want %d, %t", c.r, c.idMap, got, found, c.want, c.found)
			}
		})
	}
}

// FuzzConflict: the parsers of the host's files never panic, and a range
// they accept holds no id an entry names.
func FuzzConflict(f *testing.F) {
	f.Add(uint32(1000), uint32(2000), "alice:x:1000:1000::/:/bin/sh\n", "alice:100000:65536\n", "0 0 4294967295\n")
	f.Fuzz(func(t *testing.T, first, last uint32, passwd, sub, idMap string) {
		if first > last {
			return
		}
		r := Range{first, last}
		err := conflict(r, []byte(passwd), []byte(passwd), []byte(sub), []byte(sub))
		Unmapped(r, []byte(idMap))
		if err != nil {
			return
		}
		if _, id, ok := accountIn(r, []byte(passwd)); ok {
			t.Errorf("conflict(%s) = nil, but the passwd file names %d", r, id)
		}
	})
}

// BenchmarkCheck is the cost of the check every run as root pays at its
// start (the host's files as they are).
func BenchmarkCheck(b *testing.B) {
	for range b.N {
		if err := Check(Default); err != nil {
			b.Fatal(err)
		}
	}
}
