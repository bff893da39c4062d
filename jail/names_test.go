package jail

import (
	"regexp"
	"testing"
)

// The leftovers' name patterns, as regexps: the oracle the hand-written
// matchers are held against (regexps are kept out of package init, where
// they cost every process of every run).
var (
	tempReportOracle = regexp.MustCompile(`^\..+\.scidex-[0-9a-f]{12}\.tmp$`)
	newDirOracle     = regexp.MustCompile(`^\.` + regexp.QuoteMeta(DirPrefix) + `(.+)\.[0-9a-f]{12}\.new$`)
)

var leftoverNames = []string{
	".report.json.scidex-0123456789ab.tmp", ".r.scidex-0123456789ab.tmp", "..scidex-0123456789ab.tmp",
	".report.json.scidex-0123456789AB.tmp", ".report.json.scidex-0123456789a.tmp", "report.json.scidex-0123456789ab.tmp",
	".a.scidex-b.scidex-0123456789ab.tmp", ".scidex-0123456789ab.tmp", ".x.scidex-0123456789abc.tmp",
	".scidex-analysis-a1.0123456789ab.new", ".scidex-analysis-a.b.0123456789ab.new", ".scidex-analysis-.0123456789ab.new",
	".scidex-analysis-a1.0123456789ab.neww", "scidex-analysis-a1.0123456789ab.new", ".scidex-analysis-a1.012345678.new",
	"", ".", ".tmp", ".new", ".a\nb.scidex-0123456789ab.tmp", ".scidex-analysis-a\n.0123456789ab.new",
}

func TestLeftoverNames(t *testing.T) {
	for _, n := range leftoverNames {
		checkLeftoverName(t, n)
	}
}

func FuzzLeftoverNames(f *testing.F) {
	for _, n := range leftoverNames {
		f.Add(n)
	}
	f.Fuzz(checkLeftoverName)
}

func checkLeftoverName(t *testing.T, name string) {
	if got, want := isTempReportName(name), tempReportOracle.MatchString(name); got != want {
		t.Errorf("isTempReportName(%q) = %v, want %v", name, got, want)
	}
	id, ok := newDirID(name)
	m := newDirOracle.FindStringSubmatch(name)
	if ok != (m != nil) || (ok && id != m[1]) {
		t.Errorf("newDirID(%q) = %q, %v, want %v", name, id, ok, m)
	}
}
