package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/report"
)

// scratchScript writes where tools write on their own (HOME, TMPDIR, the
// XDG cache, Python's tempfile, the bytecode of a module imported from
// the cwd) and one file on purpose in its cwd, then fills the scratch
// with 700 KiB and tries 700 KiB more in the cwd: with a 1 MiB disk budget
// the second write must fail, the two sharing it.
const scratchScript = `set -e
echo "pwd=$(pwd)"
echo "home=$HOME tmpdir=$TMPDIR"
mkdir -p "$XDG_CACHE_HOME/tool" && echo c > "$XDG_CACHE_HOME/tool/cache"
echo h > "$HOME/.rc" && echo t > "$TMPDIR/t"
echo 'X = 1' > mod.py
python3 -c 'import tempfile, mod; tempfile.mkstemp(); print("tempdir=" + tempfile.gettempdir())'
rm mod.py
echo result > result.txt
head -c 700K /dev/zero > "$HOME/fill"
if head -c 700K /dev/zero > big 2>/dev/null; then echo shared=no; else echo shared=yes; fi
rm -f big
`

func TestScratchIsNotOutput(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name   string
		flags  []string
		want   []string // the outputs' paths
		shared string   // whether the scratch fills the run directory's budget
	}{
		{"disk budget", []string{"--disk", "1M"}, []string{"result.txt"}, "yes"},
		{"no disk budget", []string{"--disk", "0"}, []string{"result.txt"}, "no"},
		{"kept for debugging", []string{"--disk", "1M", "--keep-scratch"}, []string{
			".scidex-scratch", ".scidex-scratch/.cache", ".scidex-scratch/.cache/tool", ".scidex-scratch/.cache/tool/cache",
			".scidex-scratch/.rc", ".scidex-scratch/fill", ".scidex-scratch/tmp", ".scidex-scratch/tmp/t", "result.txt"}, "yes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := tmpRoot(t)
			args := append([]string{"run", "--id", "scratch", "--tmp-root", root}, c.flags...)
			r := runJail(t, runOpts{}, append(args, "--", "/bin/sh", "-c", scratchScript)...)
			wantStatus(t, r, report.StatusOK, 0)
			for _, line := range []string{
				"pwd=" + root + "/scidex-analysis-scratch",
				"home=" + jail.AnalysisHome + " tmpdir=" + jail.ScratchTmp,
				"tempdir=" + jail.ScratchTmp,
				"shared=" + c.shared,
			} {
				if !strings.Contains(r.stdout, line+"\n") {
					t.Errorf("inside: want %q in the output\n%s", line, r)
				}
			}
			var got []string
			for _, o := range r.report.Outputs {
				if !strings.HasPrefix(o.Path, ".scidex-scratch/tmp/tmp") { // mkstemp's random name
					got = append(got, o.Path)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("outputs = %q, want %q", got, c.want)
			}
			if s := r.report.Enforced.Mounts.Scratch; !strings.HasPrefix(s, jail.AnalysisHome) {
				t.Errorf("enforced.mounts.scratch = %q, want it to say where the scratch was", s)
			}
			if es := entries(t, root); len(es) != 0 {
				t.Errorf("left in the tmp-root: %q, want nothing", es)
			}
		})
	}
}
