package runfiles

import (
	"strings"
	"testing"
)

// TestLeftoverNames: the names a sweep takes for a dead jail's leftovers
// are exactly the names the writers make, and nothing near them.
func TestLeftoverNames(t *testing.T) {
	for i := 0; i < 100; i++ {
		if n := tempReportName("report.json"); !isTempReportName(n) {
			t.Fatalf("isTempReportName(%q) = false for a name tempReportName made", n)
		}
		n := newDirName(DirPrefix + "SDA-2026.x_1")
		if id, ok := newDirID(n); !ok || id != "SDA-2026.x_1" {
			t.Fatalf("newDirID(%q) = %q, %v; want the ID", n, id, ok)
		}
	}
	for _, c := range []struct {
		name       string
		report, nd bool
	}{
		{".report.json.scidex-0123456789ab.tmp", true, false},
		{".a.scidex-b.scidex-0123456789ab.tmp", true, false},
		{"..scidex-0123456789ab.tmp", false, false},
		{".scidex-0123456789ab.tmp", false, false},
		{".report.json.scidex-0123456789AB.tmp", false, false},
		{".report.json.scidex-0123456789a.tmp", false, false},
		{"report.json.scidex-0123456789ab.tmp", false, false},
		{".x.scidex-0123456789abc.tmp", false, false},
		{".a\nb.scidex-0123456789ab.tmp", false, false},
		{".scidex-analysis-a1.0123456789ab.new", false, true},
		{".scidex-analysis-a.b.0123456789ab.new", false, true},
		{".scidex-analysis-.0123456789ab.new", false, false},
		{".scidex-analysis-a..b.0123456789ab.new", false, false}, // not a valid ID
		{".scidex-analysis-a1.0123456789ab.neww", false, false},
		{"scidex-analysis-a1.0123456789ab.new", false, false},
		{".scidex-analysis-a1.012345678.new", false, false},
		{".scidex-analysis-a\n.0123456789ab.new", false, false},
		{"." + DirPrefix + strings.Repeat("x", MaxIDLength+1) + ".0123456789ab.new", false, false},
		{"", false, false}, {".", false, false}, {".tmp", false, false}, {".new", false, false},
	} {
		if got := isTempReportName(c.name); got != c.report {
			t.Errorf("isTempReportName(%q) = %v, want %v", c.name, got, c.report)
		}
		if _, got := newDirID(c.name); got != c.nd {
			t.Errorf("newDirID(%q) ok = %v, want %v", c.name, got, c.nd)
		}
	}
}
