package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// platformRoot is a platform's checkout with data/x.csv and, when docs
// is set, docs/y.md, readable by any uid (the analysis', nobody's).
func platformRoot(t *testing.T, docs bool) string {
	t.Helper()
	root := tmpRoot(t) // reachable by any uid, as t.TempDir's parent is not
	dirs := map[string]string{"data": "x.csv", "docs": "y.md"}
	for d, f := range dirs {
		if d == "docs" && !docs {
			continue
		}
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, f), []byte(d+" by relative path\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// readsScript reads data/ and docs/ by their relative paths, tries to
// write into ./data, and writes one result.
const readsScript = `
import errno, os
print(open("data/x.csv").read(), end="")
if os.path.isdir("docs"):
    print(open("docs/y.md").read(), end="")
for path in ("data/new.csv", "data"):
    try:
        with open(path if path != "data" else "data/x.csv", "a") as f:
            f.write("x")
        print("wrote", path)
    except OSError as e:
        print("refused", path, errno.errorcode[e.errno])
open("results.csv", "w").write("r\n")
`

// TestDataDirsInWorkingDir: a script reads data/x.csv and docs/y.md by
// their relative paths, as root and rootless; writing into ./data fails
// (EROFS, or Landlock's EACCES) and nothing of data/ or docs/ is an
// output. A root without docs/ gives no warning: the report's
// enforced.mounts.data_dirs says docs/ is not there. A link the analysis
// replaced with a directory of its own is its output.
func TestDataDirsInWorkingDir(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name     string
		rootless bool
		docs     bool
		script   string
		want     []string // the outputs' paths
		stdout   []string
	}{
		{"root", false, true, readsScript, []string{"results.csv"},
			[]string{"data by relative path\ndocs by relative path\n", "refused data/new.csv E", "refused data E"}},
		{"rootless", true, true, readsScript, []string{"results.csv"},
			[]string{"data by relative path\ndocs by relative path\n", "refused data/new.csv E", "refused data E"}},
		{"no docs/ under the root", false, false, readsScript, []string{"results.csv"},
			[]string{"data by relative path\nrefused"}},
		{"the link replaced by the analysis", false, true, "rm data && mkdir data && echo r > data/r.csv",
			[]string{"data", "data/r.csv"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := platformRoot(t, c.docs)
			cmd := []string{"python3", "-c", c.script}
			if !strings.Contains(c.script, "import") {
				cmd = []string{"/bin/sh", "-c", c.script}
			}
			flags := []string{"--root", root}
			if c.rootless {
				flags = append(flags, "--unsafe-disable", "cgroup") // no delegated cgroup for nobody here
			}
			r := runMaybeRootless(t, c.rootless, append(append(flags, "--"), cmd...)...)
			wantStatus(t, r, report.StatusOK, 0)
			var got []string
			for _, o := range r.report.Outputs {
				got = append(got, o.Path)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("outputs = %q, want %q", got, c.want)
			}
			for _, w := range c.stdout {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout = %q, want it to hold %q", r.stdout, w)
				}
			}
			for _, bad := range []string{"wrote", "EPERM"} {
				if strings.Contains(r.stdout, bad) {
					t.Errorf("stdout = %q, want no %q: ./data is read-only (EROFS or EACCES)", r.stdout, bad)
				}
			}
			if len(r.report.Warnings) != 0 {
				t.Errorf("warnings = %q, want none", r.report.Warnings)
			}
			dirs := strings.Join(r.report.Enforced.Mounts.DataDirs, "\n")
			wantDocs := "docs: " + filepath.Join(root, "docs") + ", read-only, also at ./docs"
			if !c.docs {
				wantDocs = "docs: not mounted"
			}
			if !strings.Contains(dirs, "data: "+filepath.Join(root, "data")+", read-only, also at ./data") || !strings.Contains(dirs, wantDocs) {
				t.Errorf("enforced.mounts.data_dirs = %q, want data/ at ./data and %q", dirs, wantDocs)
			}
			if b, err := os.ReadFile(filepath.Join(root, "data", "x.csv")); err != nil || string(b) != "data by relative path\n" {
				t.Errorf("the host's data/x.csv = %q, %v, want it as it was", b, err)
			}
		})
	}
}
