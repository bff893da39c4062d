package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// python is Debian's interpreter: the one with numpy, pandas, scipy,
// matplotlib and Jupyter from apt (CI installs them; see .ci/deps).
const python = "/usr/bin/python3"

// staged is a copy of examples/ (the example platform checkout and its
// scripts) plus testdata/analyses/, in a directory the analysis uid can
// traverse. Copying, instead of using the checkout in place, keeps the tests
// independent of where the repository lives: a checkout under a 0700 home
// directory is unreachable for host uid 65534.
type staged struct {
	dir      string // the copy of examples/
	platform string // its platform/ checkout: --root
	data     string // platform/data
	scripts  string // the copy of testdata/analyses/
}

// stageExamples copies the examples and test scripts into a fresh 0755
// directory, removed when the test ends.
func stageExamples(t *testing.T) staged {
	t.Helper()
	base, err := os.MkdirTemp("", "sj-analyses-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	s := staged{dir: filepath.Join(base, "examples"), scripts: filepath.Join(base, "analyses")}
	s.platform = filepath.Join(s.dir, "platform")
	s.data = filepath.Join(s.platform, "data")
	for _, c := range []struct{ from, to string }{
		{filepath.Join("..", "..", "examples"), s.dir},
		{filepath.Join("testdata", "analyses"), s.scripts},
	} {
		if err := os.CopyFS(c.to, os.DirFS(c.from)); err != nil {
			t.Fatalf("copy %s to %s: %v", c.from, c.to, err)
		}
	}
	// CopyFS honours the umask; make the tree readable for the analysis uid
	// whatever the umask of the test run.
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatalf("chmod %s: %v", base, err)
	}
	return s
}

// newDir is a path under a fresh 0755 directory, for --collect (the jail
// creates it) or anything an analysis must be able to traverse to.
func newDir(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(tmpRoot(t), name)
}

// wantEnforced fails unless every layer was in force and nothing was
// degraded: these tests run the built-in profiles unmodified, and an
// analysis that only works with a layer off would prove nothing.
func wantEnforced(t *testing.T, r result) {
	t.Helper()
	e := r.report.Enforced
	if e.Landlock == nil || len(e.Landlock.Rules) == 0 || len(e.Landlock.Degraded) > 0 {
		t.Errorf("enforced landlock = %+v, want rules and nothing degraded", e.Landlock)
	}
	if e.Seccomp == nil || e.Seccomp.SHA256 == "" {
		t.Errorf("enforced seccomp = %+v, want a loaded program", e.Seccomp)
	}
	if e.Cgroup == nil || len(e.Cgroup.Written) == 0 {
		t.Errorf("enforced cgroup = %+v, want limits written", e.Cgroup)
	}
	if len(e.Degraded) > 0 {
		t.Errorf("enforced degraded = %v, want none", e.Degraded)
	}
	if !e.NoNewPrivs || e.UID == 0 {
		t.Errorf("enforced no_new_privs, uid = %v, %d, want true, non-zero", e.NoNewPrivs, e.UID)
	}
}

// output finds path in the report's manifest.
func output(r result, path string) (report.Output, bool) {
	for _, o := range r.report.Outputs {
		if o.Path == path {
			return o, true
		}
	}
	return report.Output{}, false
}

// wantCollected checks that each path is a file in the manifest with a
// size and sha256, and that the collected copy has exactly those bytes.
// It returns the collected contents by path.
func wantCollected(t *testing.T, r result, collectDir string, paths ...string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	for _, p := range paths {
		o, ok := output(r, p)
		if !ok {
			t.Errorf("manifest has no %s; outputs: %v", p, outputNames(r))
			continue
		}
		b, err := os.ReadFile(filepath.Join(collectDir, p))
		if err != nil {
			t.Errorf("collected copy of %s: %v", p, err)
			continue
		}
		sum := sha256.Sum256(b)
		if o.Type != "file" || o.Size != int64(len(b)) || o.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("manifest %s = %s, %d bytes, sha256 %s; want file, %d bytes, sha256 %x (the collected copy)",
				p, o.Type, o.Size, o.SHA256, len(b), sum)
		}
		got[p] = b
	}
	return got
}

func outputNames(r result) []string {
	var names []string
	for _, o := range r.report.Outputs {
		names = append(names, o.Path)
	}
	return names
}

// pngMagic starts every PNG file (RFC 2083, section 3.1).
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

func isPNG(b []byte) bool { return bytes.HasPrefix(b, pngMagic) }

// csvValues reads a two-column statistic,value CSV into a map.
func csvValues(b []byte) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		if k, v, ok := strings.Cut(line, ","); ok {
			m[k] = v
		}
	}
	return m
}

// uniqueID is a run ID no other run on the host carries, so the process
// table can be searched for it (it is in the run directory's path, which
// Jupyter puts in its kernel's command line).
func uniqueID(t *testing.T, prefix string) string {
	return prefix + "-" + strings.TrimPrefix(marker(t), "1000.")
}
