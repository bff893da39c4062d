package initproc

import (
	"strings"
	"testing"
)

// status is a /proc/<tid>/status of a confined thread, uid and gid 1000,
// with seccomp, cut to the lines around the ones checked.
const status = `Name:	exe
Umask:	0022
State:	R (running)
Tgid:	1
Pid:	1
Uid:	1000	1000	1000	1000
Gid:	1000	1000	1000	1000
FDSize:	64
Groups:	
NStgid:	1
CapInh:	0000000000000000
CapPrm:	0000000000000000
CapEff:	0000000000000000
CapBnd:	0000000000000000
CapAmb:	0000000000000000
NoNewPrivs:	1
Seccomp:	2
Seccomp_filters:	1
Speculation_Store_Bypass:	thread vulnerable
`

func TestCheckStatus(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		uid     int
		groups  []int // the plan's kept groups, inside ids
		seccomp bool
		want    string // substring of the error; "": nil
	}{
		{"confined", status, 1000, nil, true, ""},
		{"confined, no filter asked", status, 1000, nil, false, ""},
		{"other uid", status, 1001, nil, true, `Uid "1000\t1000\t1000\t1000", want "1001\t1001\t1001\t1001"`},
		{"saved uid left", strings.Replace(status, "Uid:	1000	1000	1000	1000", "Uid:	1000	1000	0	1000", 1), 1000, nil, true, "has Uid"},
		{"a group", strings.Replace(status, "Groups:	", "Groups:	27", 1), 1000, nil, true, `has Groups "27", want ""`},
		{"bounding set", strings.Replace(status, "CapBnd:	0000000000000000", "CapBnd:	0000000000200000", 1), 1000, nil, true, "has CapBnd"},
		{"ambient", strings.Replace(status, "CapAmb:	0000000000000000", "CapAmb:	0000000000000001", 1), 1000, nil, true, "has CapAmb"},
		{"no no_new_privs", strings.Replace(status, "NoNewPrivs:	1", "NoNewPrivs:	0", 1), 1000, nil, true, "has NoNewPrivs"},
		{"no filter", strings.Replace(status, "Seccomp:	2", "Seccomp:	0", 1), 1000, nil, true, `has Seccomp "0", want "2"`},
		{"line missing", strings.Replace(status, "CapEff:	0000000000000000\n", "", 1), 1000, nil, true, `has CapEff "", want`},
		{"empty", "", 1000, nil, false, "has Uid"},
		{"groups kept as planned", strings.Replace(status, "Groups:	", "Groups:	65534 1000 ", 1), 1000, []int{1000, 65534}, true, ""},
		{"two overflow groups", strings.Replace(status, "Groups:	", "Groups:	65534 65534 1000", 1), 1000, []int{65534, 1000, 65534}, true, ""},
		{"a group more than planned", strings.Replace(status, "Groups:	", "Groups:	27 65534", 1), 1000, []int{65534}, true, `has Groups "27 65534", want "65534"`},
		{"a planned group missing", strings.Replace(status, "Groups:	", "Groups:	65534", 1), 1000, []int{65534, 65534}, true, `has Groups "65534", want "65534 65534"`},
		{"groups planned, none held", status, 1000, []int{65534}, true, `has Groups "", want "65534"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkStatus([]byte(tt.status), tt.uid, tt.uid, tt.groups, tt.seccomp)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("checkStatus(%s) = %v, want nil", tt.name, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("checkStatus(%s) = %v, want an error containing %q", tt.name, err, tt.want)
			}
		})
	}
}

// FuzzGroupsLine: whatever the kernel's Groups line holds, its parse
// neither panics nor changes when printed and parsed again, so a line
// matches the plan exactly when its ids do.
func FuzzGroupsLine(f *testing.F) {
	for _, s := range []string{"", "65534 1000 ", "27", "1 x 2", "\t65534\t65534 ", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		once := sortedIDs(parseIDs([]byte(line)))
		if twice := sortedIDs(parseIDs([]byte(once))); twice != once {
			t.Errorf("sortedIDs(parseIDs(%q)) = %q, and again %q: not stable", line, once, twice)
		}
	})
}
