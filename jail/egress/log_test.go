package egress

import (
	"strconv"
	"testing"
)

func TestSummary(t *testing.T) {
	notIn := func(name string) Conn {
		return Conn{Name: name, Port: 443, Decision: Refused, Reason: ReasonNotInProfile}
	}
	tests := []struct {
		name    string
		lookups []Lookup
		conns   []Conn
		want    string
	}{
		{"nothing", nil, nil, ""},
		{"allowed only", []Lookup{{Name: "a.example", Type: "A", Decision: Answered}}, []Conn{{Name: "a.example", Port: 443, Decision: Allowed}}, ""},
		{"the issue's sentence", nil, []Conn{notIn("evil.example"), notIn("evil.example"), notIn("other.example")},
			"refused 3 connections to 2 names not in the profile: evil.example:443, other.example:443"},
		{"many names", nil, []Conn{notIn("a.x"), notIn("b.x"), notIn("c.x"), notIn("d.x"), notIn("e.x")},
			"refused 5 connections to 5 names not in the profile: a.x:443, b.x:443, c.x:443 and 2 more"},
		{"lookups only", []Lookup{
			{Name: "evil.example", Type: "A", Decision: Refused, Reason: ReasonNotInProfile},
			{Name: "evil.example", Type: "AAAA", Decision: Refused, Reason: ReasonNotInProfile},
			{Name: "x.example", Type: "A", Decision: Refused, Reason: ReasonNotInProfile},
			{Type: "A", Decision: Refused, Reason: ReasonMalformed, Count: 2},
		}, nil, "refused lookups of 2 names not in the profile: evil.example, x.example; refused 2 malformed DNS queries"},
		{"kinds in order", nil, []Conn{
			{Name: "a.example", Port: 443, Decision: Cut, Reason: ReasonUpload},
			{Name: "db.example", Port: 443, Decision: Refused, Reason: ReasonNotPublic},
			{Name: "a.example", Port: 8443, Decision: Refused, Reason: ReasonPort},
			{Name: "10.0.0.5", Port: 5432, Decision: Refused, Reason: ReasonIPLiteral},
			{Decision: Refused, Reason: ReasonMalformed},
			{Name: "gone.example", Port: 443, Decision: Failed, Reason: ReasonResolve},
		}, "refused 1 connection to 1 name on ports the profile does not allow: a.example:8443; " +
			"refused 1 connection to 1 name resolving to addresses that are not public: db.example:443; " +
			"refused 1 connection to 1 address given by number, not by name: 10.0.0.5:5432; " +
			"cut 1 connection to 1 name over the run's upload budget: a.example:443; " +
			"failed 1 connection to 1 name the supervisor could not resolve: gone.example:443; " +
			"refused 1 malformed proxy request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder(100)
			for _, l := range tt.lookups {
				for range max(l.Count, 1) {
					r.lookup(l)
				}
			}
			for _, c := range tt.conns {
				r.conn(c)
			}
			if got := r.snapshot().Summary(); got != tt.want {
				t.Errorf("Summary() =\n%q, want\n%q", got, tt.want)
			}
		})
	}
}

// TestRecorderBounded: past the entry budget, entries are counted, not
// kept; repeated lookups add to one entry's count; totals stay exact.
func TestRecorderBounded(t *testing.T) {
	r := newRecorder(5)
	for i := range 1000 {
		r.lookup(Lookup{Name: "same.example", Type: "A", Decision: Answered, Answer: "127.64.0.1"})
		r.lookup(Lookup{Name: "n" + strconv.Itoa(i) + ".example", Type: "A", Decision: Refused, Reason: ReasonNotInProfile})
		r.conn(Conn{Name: "n" + strconv.Itoa(i) + ".example", Port: 443, Decision: Refused, Reason: ReasonNotInProfile, Up: 1})
	}
	l := r.snapshot()
	if got := len(l.Lookups) + len(l.Conns); got != 5 {
		t.Errorf("entries kept = %d, want 5", got)
	}
	if l.Lookups[0].Count != 1000 {
		t.Errorf("the repeated lookup's count = %d, want 1000", l.Lookups[0].Count)
	}
	// Kept: the repeated lookup, and n0's and n1's lookup and
	// connection; dropped: the other 998 names' two entries each.
	if l.Dropped != 1996 {
		t.Errorf("Dropped = %d, want 1996", l.Dropped)
	}
	tot := l.Totals
	if tot.Lookups != 2000 || tot.LookupsRefused != 1000 || tot.Conns != 1000 || tot.ConnsRefused != 1000 || tot.Up != 1000 || tot.LookupsBy[ReasonNotInProfile] != 1000 || tot.ConnsBy[ReasonNotInProfile] != 1000 {
		t.Errorf("Totals = %+v, want 2000 lookups (1000 refused), 1000 refused connections, 1000 bytes up", tot)
	}
	want := "refused 1000 connections to at least 2 names not in the profile: n0.example:443, n1.example:443 (1996 egress log entries over the budget not kept)"
	if got := l.Summary(); got != want {
		t.Errorf("Summary() =\n%q, want\n%q", got, want)
	}
}
