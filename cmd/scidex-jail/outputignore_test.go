package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// cachesScript leaves what test and notebook tools leave in the working
// directory, beside one result, and prints where the cache variables
// point.
const cachesScript = `
for d in .hypothesis/examples/ab .pytest_cache/v/cache .ipynb_checkpoints __pycache__ .mypy_cache/3.11 .ruff_cache/0.4 sub/__pycache__; do
	mkdir -p "$d" && for i in 1 2 3 4 5 6; do echo x > "$d/f$i"; done
done
echo 'a,b' > results.csv
echo "hyp=$HYPOTHESIS_STORAGE_DIRECTORY mypy=$MYPY_CACHE_DIR ruff=$RUFF_CACHE_DIR"
`

// TestOutputIgnore: the caches tools keep in the working directory are
// never outputs (not listed, not collected, not counted against the entry
// budget: 42 files and 13 directories of them fit a budget of 4 entries),
// while results.csv is; a profile's output_ignore replaces the list, or
// extends it. The cache variables tools read point into the scratch.
func TestOutputIgnore(t *testing.T) {
	requireRoot(t)
	config := filepath.Join(t.TempDir(), "profiles.json")
	err := os.WriteFile(config, []byte(`{"profiles": {
		"only-hypothesis": {"output_ignore": [".hypothesis"]},
		"plus-sub": {"output_ignore": {"extend": ["sub"]}}}}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		flags []string
		want  []string // the outputs' paths, with .pytest_cache's 6 files left out when listed
	}{
		{"default list", []string{"--output-entries", "4"}, []string{"results.csv", "sub"}},
		{"a profile that replaces it", []string{"--config", config, "--profile", "only-hypothesis"},
			[]string{".ipynb_checkpoints", ".mypy_cache", ".mypy_cache/3.11", ".pytest_cache", ".pytest_cache/v", ".pytest_cache/v/cache",
				".ruff_cache", ".ruff_cache/0.4", "__pycache__", "results.csv", "sub", "sub/__pycache__"}},
		{"a profile that extends it", []string{"--config", config, "--profile", "plus-sub", "--output-entries", "4"}, []string{"results.csv"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			collect := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--id", "caches", "--tmp-root", tmpRoot(t), "--collect", collect}, c.flags...)
			r := runJail(t, runOpts{}, append(args, "--", "/bin/sh", "-c", cachesScript)...)
			wantStatus(t, r, report.StatusOK, 0)
			var got []string
			for _, o := range r.report.Outputs {
				if base := filepath.Base(o.Path); o.Type != "file" || !strings.HasPrefix(base, "f") {
					got = append(got, o.Path)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("outputs (less the caches' files) = %q, want %q", got, c.want)
			}
			if c.name != "default list" {
				return
			}
			// Ignored is not hidden from the disk budget: the tmpfs counts
			// a page at least for each of the caches' 42 files.
			if used := r.report.DiskUsedBytes; used < 42*4096 {
				t.Errorf("disk_used_bytes = %d, want at least %d: the ignored caches still use the disk budget", used, 42*4096)
			}
			if files := entries(t, collect); !slices.Equal(files, []string{"results.csv"}) {
				t.Errorf("collected = %q, want only results.csv", files)
			}
			const want = "hyp=/home/analysis/.cache/hypothesis mypy=/home/analysis/.cache/mypy ruff=/home/analysis/.cache/ruff"
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stdout = %q, want %q", r.stdout, want)
			}
		})
	}
}
