package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// debFiles are the package's files (not directories) and what kind each
// is; the conffile is the one kept after dpkg -r.
var debFiles = []string{
	"/usr/bin/scidex-jail",
	"/etc/scidex-jail/profiles.json",
	"/usr/share/man/man1/scidex-jail.1.gz",
	"/usr/share/bash-completion/completions/scidex-jail",
	"/usr/lib/systemd/system/scidex-jail.slice",
	"/usr/lib/tmpfiles.d/scidex-jail.conf",
	"/usr/libexec/scidex-jail/delegate",
	"/usr/libexec/scidex-jail/scidex-jail-init",
	"/usr/share/doc/scidex-jail/copyright",
	"/usr/share/doc/scidex-jail/README.md.gz",
	"/usr/share/doc/scidex-jail/examples/systemd/scidex-jail-runner.service",
	"/usr/share/doc/scidex-jail/examples/systemd/scidex-jail-serve.service",
	"/usr/share/doc/scidex-jail/examples/apparmor/scidex-jail",
	"/usr/share/doc/scidex-jail/examples/slurm/scidex-analyses.sbatch",
	"/usr/share/doc/scidex-jail/examples/kubernetes/scidex-analysis-job.yaml",
	"/usr/share/scidex-jail/report.schema.json",
	"/usr/lib/python3/dist-packages/scidex_jail/__init__.py",
	"/usr/lib/python3/dist-packages/scidex_jail/report.schema.json",
}

const conffile = "/etc/scidex-jail/profiles.json"

// TestDebianPackage builds the package as `make deb` does, installs it
// with dpkg -i, uses what it installed (the example analysis with the
// installed binary, the profiles file, the manual page, the completion,
// the unit files through systemd-analyze verify, the tmpfiles entry), then
// removes it (only the conffile stays, as Debian policy wants) and purges
// it (nothing stays). On a host that has the package it does all this in
// throw-away overlays (debInOverlay).
func TestDebianPackage(t *testing.T) {
	requireRoot(t)
	requireCommands(t, map[string]string{"dpkg-deb": "dpkg", "systemd-analyze": "systemd", "systemd-tmpfiles": "systemd",
		"man": "man-db", "file": "file"})
	if s := status(t); s != "" && !strings.Contains(s, "not-installed") {
		if os.Getenv(debOverlayEnv) != "1" {
			debInOverlay(t, s)
			return
		}
		dpkg(t, "--purge", "scidex-jail") // the overlay's copy only
	}
	for _, f := range append(debFiles, "/etc/scidex-jail", "/run/scidex-jail") {
		if _, err := os.Lstat(f); err == nil {
			t.Fatalf("%s exists before the package is installed: this test must start from a machine without it", f)
		}
	}
	out := sharedDir(t, "scidex-deb-")
	build := exec.Command(filepath.Join(repoRoot, "packaging", "deb", "build.sh"), jailBin, "0.0~test1", out)
	build.Stderr = os.Stderr
	b, err := build.Output()
	if err != nil {
		t.Fatalf("packaging/deb/build.sh: %v", err)
	}
	deb := strings.TrimSpace(string(b))
	if filepath.Base(deb) != "scidex-jail_0.0~test1_"+dpkgArch(t)+".deb" {
		t.Errorf("package file = %s, want scidex-jail_0.0~test1_<arch>.deb", deb)
	}
	if c := run(t, "dpkg-deb", "-f", deb, "Package", "Version"); c != "Package: scidex-jail\nVersion: 0.0~test1\n" {
		t.Errorf("dpkg-deb -f = %q", c)
	}
	if c := run(t, "dpkg-deb", "--ctrl-tarfile", deb); !strings.Contains(c, "conffiles") {
		t.Errorf("control archive has no conffiles")
	}

	t.Cleanup(func() { dpkg(t, "--purge", "scidex-jail") })
	dpkg(t, "-i", deb)
	checkInstalled(t)

	dpkg(t, "-r", "scidex-jail")
	if s := status(t); s != "deinstall ok config-files" {
		t.Errorf("after dpkg -r: status %q, want \"deinstall ok config-files\"", s)
	}
	for _, f := range debFiles {
		_, err := os.Lstat(f)
		if f == conffile && err != nil {
			t.Errorf("after dpkg -r: conffile %s gone (%v); Debian keeps conffiles until purge", f, err)
		}
		if f != conffile && err == nil {
			t.Errorf("after dpkg -r: %s left behind", f)
		}
	}
	for _, d := range []string{"/usr/libexec/scidex-jail", "/usr/share/doc/scidex-jail", "/run/scidex-jail",
		"/usr/share/scidex-jail", "/usr/lib/python3/dist-packages/scidex_jail"} {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("after dpkg -r: directory %s left behind", d)
		}
	}
	dpkg(t, "--purge", "scidex-jail")
	if s := status(t); s != "" && !strings.Contains(s, "not-installed") {
		t.Errorf("after dpkg --purge: status %q, want the package unknown", s)
	}
	for _, f := range []string{conffile, "/etc/scidex-jail"} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("after dpkg --purge: %s left behind", f)
		}
	}
}

// checkInstalled uses what the package installed.
func checkInstalled(t *testing.T) {
	t.Helper()
	if s := status(t); s != "install ok installed" {
		t.Fatalf("after dpkg -i: status %q, want \"install ok installed\"", s)
	}
	for _, f := range debFiles {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("after dpkg -i: %v", err)
		}
	}
	if c := run(t, "file", "-b", "/usr/bin/scidex-jail"); !strings.Contains(c, "statically linked") && !strings.Contains(c, "static-pie") {
		t.Errorf("/usr/bin/scidex-jail is %s, want a static binary", c)
	}

	// The conffile holds the built-in profiles, and the installed binary
	// reads it by default: the same profiles come out.
	builtin := run(t, "/usr/bin/scidex-jail", "profiles", "--builtin")
	if got, _ := os.ReadFile(conffile); string(got) != builtin {
		t.Errorf("%s differs from scidex-jail profiles --builtin:\n%s", conffile, got)
	}
	cmd := exec.Command("/usr/bin/scidex-jail", "profiles")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if got, err := cmd.Output(); err != nil || string(got) != builtin || !strings.Contains(errb.String(), "overridden by "+conffile) {
		t.Errorf("scidex-jail profiles with the conffile = %v, stderr %q; want the built-ins, read from %s", err, errb.String(), conffile)
	}

	// The example analysis, with the installed binary.
	rep := filepath.Join(t.TempDir(), "report.json")
	ex := exec.Command(filepath.Join(repoRoot, "examples", "run-example.sh"), "--report", rep, "/usr/bin/scidex-jail")
	if o, err := ex.CombinedOutput(); err != nil {
		t.Errorf("examples/run-example.sh /usr/bin/scidex-jail: %v\n%s", err, o)
	}
	if r := readReport(t, rep); r != nil && (r.Status != "ok" || len(r.Outputs) == 0) {
		t.Errorf("example analysis with the installed binary: status %s, %d outputs; want ok with outputs (%s)", r.Status, len(r.Outputs), r.CompletionNotes)
	}

	// The schema is the installed binary's, and the Python package is
	// Debian's python3's: it finds the installed binary on PATH, runs it,
	// and checks the report against that schema (root's import leaves
	// byte code, which postrm removes).
	if got, _ := os.ReadFile("/usr/share/scidex-jail/report.schema.json"); string(got) != run(t, "/usr/bin/scidex-jail", "schema") {
		t.Errorf("/usr/share/scidex-jail/report.schema.json differs from scidex-jail schema")
	}
	py := exec.Command("/usr/bin/python3", "-c", `import scidex_jail as s
r = s.Jail(validate=True).run(["/bin/true"], analysis_id="deb-python")
print(s.__file__, r.status, s.schema_text() == open("/usr/share/scidex-jail/report.schema.json").read())`)
	py.Dir, py.Env = "/", []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	if o, err := py.CombinedOutput(); err != nil || string(o) != "/usr/lib/python3/dist-packages/scidex_jail/__init__.py ok True\n" {
		t.Errorf("python3 -c 'import scidex_jail; ...run...' = %v:\n%s\nwant the installed package, status ok, the binary's schema", err, o)
	}

	if page := run(t, "man", "-P", "cat", "scidex-jail"); !strings.Contains(page, "--cgroup-parent") || !strings.Contains(page, "EXIT STATUS") {
		t.Errorf("man scidex-jail lacks --cgroup-parent or EXIT STATUS:\n%s", page)
	}
	if c := run(t, "bash", "-c", "source /usr/share/bash-completion/completions/scidex-jail && complete -p scidex-jail"); !strings.Contains(c, "-F _scidex_jail scidex-jail") {
		t.Errorf("completion registers %q, want -F _scidex_jail", c)
	}

	// The unit files as systemd reads them: the slice as installed, the
	// example services as an administrator would install them.
	units := t.TempDir()
	verify := []string{"/usr/lib/systemd/system/scidex-jail.slice"}
	for _, name := range []string{"scidex-jail-runner.service", "scidex-jail-serve.service"} {
		svc, err := os.ReadFile(filepath.Join("/usr/share/doc/scidex-jail/examples/systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(units, name), string(svc), 0o644)
		verify = append(verify, filepath.Join(units, name))
	}
	for _, unit := range verify {
		v := exec.Command("systemd-analyze", "verify", "--man=yes", unit)
		if o, err := v.CombinedOutput(); err != nil || len(bytes.TrimSpace(o)) > 0 {
			t.Errorf("systemd-analyze verify %s = %v:\n%s", unit, err, o)
		}
	}
	// postinst ran systemd-tmpfiles --create: the services' tmp-root.
	if fi, err := os.Stat("/run/scidex-jail"); err != nil || fi.Mode().Perm() != 0o777 || fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("/run/scidex-jail = %v, %v; want a sticky 1777 directory made by systemd-tmpfiles", fi, err)
	}
	// And the uid leases' directory, root's alone.
	if fi, err := os.Lstat("/run/scidex-jail-uids"); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("/run/scidex-jail-uids = %v, %v; want a 0700 directory made by systemd-tmpfiles", fi, err)
	}
}

// dpkg runs dpkg, waiting while another package manager holds its lock.
func dpkg(t *testing.T, args ...string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		cmd := exec.Command("dpkg", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		if strings.Contains(string(out), "lock") && time.Now().Before(deadline) {
			time.Sleep(2 * time.Second)
			continue
		}
		t.Fatalf("dpkg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func status(t *testing.T) string {
	t.Helper()
	out, _ := exec.Command("dpkg-query", "-W", "-f", "${Status}", "scidex-jail").Output()
	return strings.TrimSpace(string(out))
}

func dpkgArch(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(run(t, "dpkg", "--print-architecture"))
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return string(out)
}
