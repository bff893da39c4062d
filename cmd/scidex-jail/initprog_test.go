package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestInitProgram: the jail runs the init found by its fixed rule (beside
// it, or in ../libexec/scidex-jail/) and refuses to run, with exit 125, a
// setup error of stage init naming the file and the fix, and nothing left
// behind, when the init is missing, not root's or writable by others (the
// jail runs as root), of another version, or not an init at all; check's
// init line says the same.
func TestInitProgram(t *testing.T) {
	requireRoot(t)
	init := testutil.InitBeside(jailBin)
	other := filepath.Join(t.TempDir(), "other-init")
	build := exec.Command("go", "build", "-trimpath", "-o", other,
		"-ldflags", "-X github.com/scidex/scidex-jail/internal/buildversion.Version=other-version", "./cmd/scidex-jail-init")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build an init of another version: %v\n%s", err, out)
	}
	garbler := buildGarbler(t, `{"kind":"bye"}`+"\n", "")
	for _, c := range []struct {
		name  string
		place string // the init's place relative to the jail's directory
		from  string // the file put there ("" for none)
		prep  func(path string) error
		want  string // in the setup error; "" means the run is ok
	}{
		{"beside", "scidex-jail-init", init, nil, ""},
		{"libexec", "../libexec/scidex-jail/scidex-jail-init", init, nil, ""},
		{"missing", "", "", nil, "not found"},
		{"not root's", "scidex-jail-init", init, func(p string) error { return os.Chown(p, 65534, 65534) }, "owned by uid 65534"},
		{"group-writable", "scidex-jail-init", init, func(p string) error { return os.Chmod(p, 0o775) }, "writable by group or others"},
		{"another version", "scidex-jail-init", other, nil, `version "other-version"`},
		{"not an init", "scidex-jail-init", "/usr/bin/true", nil, "ended without stating its version"},
		{"malformed first line", "scidex-jail-init", garbler, nil, `init message of unknown kind "bye"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			os.Chmod(top, 0o755)
			dir := filepath.Join(top, "bin")
			copyFile(t, jailBin, filepath.Join(dir, "scidex-jail"))
			var path string
			if c.from != "" {
				path = filepath.Join(dir, c.place)
				copyFile(t, c.from, path)
				if c.prep != nil {
					if err := c.prep(path); err != nil {
						t.Fatal(err)
					}
				}
			}
			root := tmpRoot(t)
			r := runCopiedJail(t, dir, root, "initprog")
			if c.want == "" {
				wantStatus(t, r, report.StatusOK, 0)
				return
			}
			wantStatus(t, r, report.StatusSetupError, 125)
			se := r.report.SetupError
			if se == nil || se.Stage != "init" || !strings.Contains(se.Message, c.want) || !strings.Contains(se.Message, "scidex-jail-init") {
				t.Errorf("setup error = %+v, want stage init naming scidex-jail-init and %q", se, c.want)
			}
			if es := entries(t, root); len(es) != 0 {
				t.Errorf("tmp-root holds %v after a refused run, want nothing", es)
			}
			// check says the same, with the fix.
			out, _ := exec.Command(filepath.Join(dir, "scidex-jail"), "check", "--tmp-root", root).Output()
			if l := parseCheck(t, string(out))["init"]; l.state != "MISSING" || !strings.Contains(l.text, c.want) || l.fix == "" {
				t.Errorf("check's init line = %+v, want MISSING finding %q, with a fix", l, c.want)
			}
		})
	}
}

// buildGarbler builds a program that, run as the init, writes first on
// the sync socket (fd 3), then, once it has read two lines (the config
// and "go"), writes then, and waits to be killed.
func buildGarbler(t *testing.T, first, then string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	prog := fmt.Sprintf(`package main

import (
	"bufio"
	"os"
)

func main() {
	sock := os.NewFile(3, "sync")
	sock.WriteString(%q)
	r := bufio.NewReader(sock)
	r.ReadString('\n')
	r.ReadString('\n')
	sock.WriteString(%q)
	select {}
}
`, first, then)
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "garbler")
	build := exec.Command("go", "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build an init that garbles: %v\n%s", err, out)
	}
	return bin
}

// TestInitMalformedMessage: a line of the init that is no message of an
// init (here a "started" with no pid), after a right hello and "go", ends
// the run as a setup failure of stage init naming what was wrong, with
// nothing left behind, as an init that died would.
func TestInitMalformedMessage(t *testing.T) {
	requireRoot(t)
	out, err := exec.Command(jailBin, "version").Output()
	version := strings.TrimPrefix(strings.TrimSpace(string(out)), "scidex-jail ")
	if err != nil || version == "" {
		t.Fatalf("scidex-jail version = %q, %v", out, err)
	}
	hello := fmt.Sprintf(`{"kind":"hello","version":%q}`+"\n", version)
	garbler := buildGarbler(t, hello, `{"kind":"started","us":1}`+"\n")
	dir := filepath.Join(t.TempDir(), "bin")
	copyFile(t, jailBin, filepath.Join(dir, "scidex-jail"))
	copyFile(t, garbler, filepath.Join(dir, "scidex-jail-init"))
	root := tmpRoot(t)
	r := runCopiedJail(t, dir, root, "garbled")
	wantStatus(t, r, report.StatusSetupError, 125)
	if se := r.report.SetupError; se == nil || se.Stage != "init" || !strings.Contains(se.Message, `init message "started": pid 0`) {
		t.Errorf("setup error = %+v, want stage init naming the started message's pid 0", se)
	}
	if es := entries(t, root); len(es) != 0 {
		t.Errorf("tmp-root holds %v after the run, want nothing", es)
	}
}

// runCopiedJail runs `run --id id --tmp-root root -- /bin/true` with the
// scidex-jail in dir (beside whatever init the test put there), and reads
// its report, if it wrote one.
func runCopiedJail(t *testing.T, dir, root, id string) result {
	t.Helper()
	rep := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(filepath.Join(dir, "scidex-jail"), "run", "--id", id, "--tmp-root", root, "--report", rep, "--", "/bin/true")
	out, err := cmd.CombinedOutput()
	r := result{stderr: string(out)}
	if err != nil {
		r.code = err.(*exec.ExitError).ExitCode()
	}
	if b, err := os.ReadFile(rep); err == nil {
		validReport(t, b)
		r.report = &report.Report{}
		if err := json.Unmarshal(b, r.report); err != nil {
			t.Fatalf("report: %v\n%s", err, b)
		}
	}
	return r
}

// copyFile copies src to dst (mode 0755), making dst's directories (0755).
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
