package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
)

// The environment recipe (docs/deploying.md, "An environment for
// analyses"): the platform builds a virtual environment on the host with
// the system's Python and its packages plus its own, binds it read-only
// into the view, and runs its interpreter as the command. pip inside a run
// is refused by PEP 668, as it should be: this is the way to add a package.

// venvModule is the package the tests install into the environment: not
// in Debian, so importing it proves the environment's site-packages were
// used.
const venvModule = "scidex_env_probe"

// makeVenv builds the recipe's environment under a temporary directory:
// `python3 -m venv --without-pip --system-site-packages`, then the
// system's pip installing a tiny package made here (flit_core, Debian's,
// builds it; --no-index: no network). It returns the environment's
// directory, root's and 0755 like /opt's.
func makeVenv(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sj-venv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, env := filepath.Join(dir, "src"), filepath.Join(dir, "env")
	files := map[string]string{
		"pyproject.toml": "[build-system]\nrequires = [\"flit_core\"]\nbuild-backend = \"flit_core.buildapi\"\n\n" +
			"[project]\nname = \"" + venvModule + "\"\nversion = \"1.0\"\ndescription = \"the environment recipe's test package\"\n",
		filepath.Join(venvModule, "__init__.py"): "ANSWER = 42\n",
	}
	for name, body := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, argv := range [][]string{
		{"/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", env},
		{"/usr/bin/python3", "-m", "pip", "--python", filepath.Join(env, "bin", "python"), "install",
			"--quiet", "--no-index", "--no-build-isolation", "--no-cache-dir", src},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s (python3-venv, python3-pip and flit are Debian's; .ci/deps test installs them)", strings.Join(argv, " "), err, out)
		}
	}
	return env
}

// venvProbe is what the analysis does: import the environment's package,
// then try to change the environment, printing each errno.
const venvProbe = `import errno, os, sys, sysconfig
import ` + venvModule + ` as m
print("answer", m.ANSWER)
print("prefix", sys.prefix)
site = sysconfig.get_paths()["purelib"]
for what, f in [("new module", lambda: open(os.path.join(site, "injected.py"), "w")),
                ("package file", lambda: open(m.__file__, "a")),
                ("new dir", lambda: os.mkdir(os.path.join(sys.prefix, "x")))]:
    try:
        f()
        print(what, "written")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
`

// TestVenvRecipe runs the recipe's environment from the CLI, bound with
// --ro and with a profile's read_only: the analysis imports the package
// the platform installed, the environment is its sys.prefix, and nothing
// of it can be written from inside. Without the environment the same
// import fails: the package is the environment's, not the host's.
func TestVenvRecipe(t *testing.T) {
	requireRoot(t)
	env := makeVenv(t)
	python := filepath.Join(env, "bin", "python")
	config := filepath.Join(t.TempDir(), "profiles.json")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`{"profiles": {"analysis-env": {"description": "the platform's environment", "read_only": [%q]}}}`, env)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"--ro", []string{"--ro", env}},
		{"profile read_only", []string{"--config", config, "--profile", "analysis-env"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--id", "venv", "--tmp-root", tmpRoot(t)}, c.args...)
			r := runJail(t, runOpts{}, append(args, "--", python, "-c", venvProbe)...)
			wantStatus(t, r, report.StatusOK, 0)
			for _, want := range []string{"answer 42", "prefix " + env} {
				if !strings.Contains(r.stdout, want+"\n") {
					t.Errorf("%s: stdout = %q, want a line %q", c.name, r.stdout, want)
				}
			}
			for _, what := range []string{"new module", "package file", "new dir"} {
				if !strings.Contains(r.stdout, what+" EROFS\n") && !strings.Contains(r.stdout, what+" EACCES\n") {
					t.Errorf("%s: writing the environment's %s: stdout = %q, want EROFS or EACCES", c.name, what, r.stdout)
				}
			}
		})
	}
	t.Run("system python", func(t *testing.T) {
		r := runJail(t, runOpts{}, "run", "--id", "venv", "--tmp-root", tmpRoot(t), "--ro", env, "--", "/usr/bin/python3", "-c", "import "+venvModule)
		wantStatus(t, r, report.StatusExitNonzero, 1)
		if !strings.Contains(r.stderr, "ModuleNotFoundError") {
			t.Errorf("import %s with /usr/bin/python3: stderr = %q, want ModuleNotFoundError", venvModule, r.stderr)
		}
	})
}
