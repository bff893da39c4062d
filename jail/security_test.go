package jail

import (
	"reflect"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/seccomp"
)

// TestSeccompReportKept: the report kept for a policy is the one a fresh
// lookup makes, and each caller's copy is its own.
func TestSeccompReportKept(t *testing.T) {
	for _, pol := range []seccomp.Policy{
		{Name: "default", Net: seccomp.NetNone, Label: "none"},
		{Name: "default", Net: seccomp.NetInet, Label: "host"},
		{Name: "default", Net: seccomp.NetInet, Label: "egress"}, // another label, one filter
	} {
		prog, err := seccomp.Lookup(pol)
		if err != nil {
			t.Fatalf("seccomp.Lookup(%v) = %v", pol, err)
		}
		fresh := &report.SeccompReport{Policy: pol.String(), Arch: prog.Arch, SHA256: prog.SHA256, Denied: prog.Denied()}
		for i := range 3 {
			got, err := seccompReport(pol)
			if err != nil {
				t.Fatalf("seccompReport(%v) = %v", pol, err)
			}
			if !reflect.DeepEqual(got, fresh) {
				t.Errorf("seccompReport(%v) (call %d) = %+v, want %+v", pol, i+1, got, fresh)
			}
			// A caller that changes its copy changes no other's.
			got.Denied[0], got.SHA256 = "changed", "changed"
		}
	}
	if _, err := seccompReport(seccomp.Policy{Name: "nosuch"}); err == nil {
		t.Errorf("seccompReport(nosuch) = nil error, want the lookup's")
	}
}
