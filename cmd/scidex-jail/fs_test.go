package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestFSAccess runs one analysis that attempts every access in a table,
// from inside the real jail, and compares each outcome with the contract:
// read data/ and docs/, write only the run directory, /dev/shm and
// /dev/null, see nothing else of the checkout, of other analyses or of the
// host's processes and sockets.
func TestFSAccess(t *testing.T) {
	requireRoot(t)
	c := newFSCheckout(t)
	const id = "fsaccess"
	run := filepath.Join(c.tmpRoot, "scidex-analysis-"+id)
	// A process of the host, as another analysis or a service would be.
	sleep := exec.Command("/bin/sleep", "1000")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	hostPID := strconv.Itoa(sleep.Process.Pid)

	probes := fsAccessProbes(t, c, run, hostPID)
	r := runJail(t, runOpts{}, "run", "--id", id, "--root", c.root, "--tmp-root", c.tmpRoot,
		"--env", "HOST_PID="+hostPID, "--", "/usr/bin/python3", "-c", fsScript(probes))
	wantStatus(t, r, report.StatusOK, 0)
	fsCheck(t, probes, r.stdout)
	// Nothing of it reached the host.
	data, input := filepath.Join(c.root, "data"), filepath.Join(c.root, "data", "input.csv")
	for _, path := range []string{filepath.Join(data, "input.csv"), filepath.Join(c.root, "docs", "readme.md")} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("after the run: stat %s: %v, want it untouched", path, err)
		}
	}
	if b, _ := os.ReadFile(input); string(b) != "a,b\n1,2\n" {
		t.Errorf("after the run: data/input.csv = %q, want it unchanged", b)
	}
	if names := entries(t, data); len(names) != 2 {
		t.Errorf("after the run: data/ holds %v, want only input.csv and tool.sh", names)
	}
	if err := sleep.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("host process %s after the run: %v, want it alive", hostPID, err)
	}
}

// fsAccessProbes are TestFSAccess's probes of a run whose run directory
// is run, beside the checkout c and the host process hostPID.
func fsAccessProbes(t *testing.T, c fsCheckout, run, hostPID string) []fsProbe {
	t.Helper()
	data := filepath.Join(c.root, "data")
	input := filepath.Join(data, "input.csv")
	in := func(dir, name string) string { return fsPy(filepath.Join(dir, name)) }
	up := strings.Repeat("../", 12) // more ".." than the path is deep: stops at /

	probes := []fsProbe{
		// data/ and docs/: readable, never writable.
		{"read data/input.csv", "read(" + fsPy(input) + ")", fsOK},
		{"list data/", "os.listdir(" + fsPy(data) + ")", fsOK},
		{"read docs/readme.md", "read(" + in(c.root, "docs/readme.md") + ")", fsOK},
		{"write data/input.csv", "write(" + fsPy(input) + ")", fsReadOnly},
		{"create data/new.csv", "write(" + in(data, "new.csv") + ")", fsReadOnly},
		{"truncate data/input.csv", "os.truncate(" + fsPy(input) + ", 0)", fsReadOnly},
		{"open data/input.csv O_TRUNC", "trunc_open(" + fsPy(input) + ")", fsReadOnly},
		{"rename in data/", "os.rename(" + fsPy(input) + ", " + in(data, "moved.csv") + ")", fsReadOnly},
		{"delete data/input.csv", "os.unlink(" + fsPy(input) + ")", fsReadOnly},
		{"mkdir in data/", "os.mkdir(" + in(data, "sub") + ")", fsReadOnly},
		{"chmod data/input.csv", "os.chmod(" + fsPy(input) + ", 0o600)", fsReadOnly},
		{"write docs/readme.md", "write(" + in(c.root, "docs/readme.md") + ")", fsReadOnly},
		{"delete docs/readme.md", "os.unlink(" + in(c.root, "docs/readme.md") + ")", fsReadOnly},
		{"exec data/tool.sh", "run(" + in(data, "tool.sh") + ")", fsDenied},

		// The rest of the checkout is not in the view at all.
		{"read api.py", "read(" + in(c.root, "api.py") + ")", fsAbsent},
		{"stat api.py", "os.stat(" + in(c.root, "api.py") + ")", fsAbsent},
		{"read site/index.html", "read(" + in(c.root, "site/index.html") + ")", fsAbsent},
		{"stat site/", "os.stat(" + in(c.root, "site") + ")", fsAbsent},

		// Another analysis' run directory and the host's /tmp: invisible.
		{"read other run's file", "read(" + in(c.other, "secret.txt") + ")", fsAbsent},
		{"stat other run's directory", "os.stat(" + fsPy(c.other) + ")", fsAbsent},
		{"read a file in the host's tmp-root", "read(" + in(c.tmpRoot, "host-tmp-file.txt") + ")", fsAbsent},

		// Host secrets and homes.
		{"read /etc/shadow", "read('/etc/shadow')", fsDenied},
		// World-readable on the host, but not on the jail's /etc list.
		{"read /etc/hostname", "read('/etc/hostname')", fsDenied},
		{"stat /root", "os.stat('/root')", fsAbsent},
		// /home holds the analysis' own home (its scratch) only: the
		// host's homes are stat'ed one by one below.
		{"write in its own home", "write('/home/analysis/x')", fsOutcomes{0}},

		// Socket directories are empty: PostgreSQL's socket cannot be
		// reached (Landlock ABI 7 does not cover pathname unix sockets).
		{"stat the PostgreSQL socket", "os.stat('/var/run/postgresql/.s.PGSQL.5432')", fsAbsent},
		{"connect to the PostgreSQL socket", "connect('/var/run/postgresql/.s.PGSQL.5432')", fsAbsent},
		{"connect via /run/postgresql", "connect('/run/postgresql/.s.PGSQL.5432')", fsAbsent},
		// Empty, or not even listable (Landlock grants no read_dir there):
		// the stat probes of every host /run entry below are the proof.
		{"/run is empty", "empty('/run')", append(fsErr(syscall.EACCES), 0)},
		{"/var/run is empty", "empty('/var/run')", append(fsErr(syscall.EACCES), 0)},

		// Writes anywhere but the run directory, /dev/shm and /dev/null.
		{"create /x", "write('/x')", fsReadOnly},
		{"create /tmp/x", "write('/tmp/x')", fsReadOnly},
		{"create in the tmp-root", "write(" + in(c.tmpRoot, "x") + ")", fsReadOnly},
		{"create in the checkout", "write(" + in(c.root, "new.py") + ")", fsReadOnly},
		{"create /usr/x", "write('/usr/x')", fsReadOnly},
		{"write /usr/bin/python3", "write('/usr/bin/python3')", fsDenied}, // root's 0755: the host's modes say no first
		{"create /etc/x", "write('/etc/x')", fsReadOnly},
		{"create /var/tmp/x", "write('/var/tmp/x')", fsReadOnly},
		{"create /run/x", "write('/run/x')", fsReadOnly},
		{"create /dev/x", "write('/dev/x')", fsReadOnly},
		{"write /proc/self/comm", "write('/proc/self/comm')", fsDenied},
		{"write /proc/self/oom_score_adj", "write('/proc/self/oom_score_adj')", fsDenied},
		{"write /proc/sys/kernel/hostname", "write('/proc/sys/kernel/hostname')", fsDenied},

		// The run directory, /dev/shm and /dev/null are writable.
		{"create in the run directory", "write(" + in(run, "out.txt") + ")", fsOK},
		{"truncate in the run directory", "os.truncate(" + in(run, "out.txt") + ", 0)", fsOK},
		{"mkdir in the run directory", "os.mkdir(" + in(run, "sub") + ")", fsOK},
		{"rename in the run directory", "os.rename(" + in(run, "out.txt") + ", " + in(run, "sub/out.txt") + ")", fsOK},
		{"create in /dev/shm", "write('/dev/shm/x')", fsOK},
		{"delete in /dev/shm", "os.unlink('/dev/shm/x')", fsOK},
		{"write /dev/null", "write('/dev/null')", fsOK},

		// Links and renames give no new access.
		{"symlink to /etc/shadow", "os.symlink('/etc/shadow', " + in(run, "shadow") + ")", fsOK},
		{"read through it", "read(" + in(run, "shadow") + ")", fsDenied},
		{"symlink to data/input.csv", "os.symlink(" + fsPy(input) + ", " + in(run, "input") + ")", fsOK},
		{"read through it (allowed)", "read(" + in(run, "input") + ")", fsOK},
		{"write through it", "write(" + in(run, "input") + ")", fsReadOnly},
		{"hardlink data/input.csv into the run directory", "os.link(" + fsPy(input) + ", " + in(run, "hard.csv") + ")", fsCrossDev},
		{"hardlink /etc/shadow into the run directory", "os.link('/etc/shadow', " + in(run, "hard-shadow") + ")", fsCrossDev},
		{"rename data/input.csv into the run directory", "os.rename(" + fsPy(input) + ", " + in(run, "stolen.csv") + ")", fsCrossDev},
		{"rename a run file into data/", "os.rename(" + in(run, "sub/out.txt") + ", " + in(data, "planted.csv") + ")", fsCrossDev},

		// /proc and ".." lead nowhere new.
		{"read /proc/1/root/etc/shadow", "read('/proc/1/root/etc/shadow')", fsDenied},
		// The init's root is the same view; whether /proc/1/root may be
		// followed at all (ptrace access to the init) is not the point.
		{"read api.py via /proc/1/root", "read('/proc/1/root' + " + in(c.root, "api.py") + ")", fsErr(syscall.ENOENT, syscall.EACCES)},
		{"read the other run via /proc/self/cwd/..", "read('/proc/self/cwd/../scidex-analysis-other/secret.txt')", fsAbsent},
		{"read /etc/shadow via ..", "read(" + fsPy(run+"/"+up+"etc/shadow") + ")", fsDenied},
		{"read api.py via ..", "read(" + fsPy(run+"/"+up+strings.TrimPrefix(c.root, "/")+"/api.py") + ")", fsAbsent},
		{"read the other run via ..", "read(" + fsPy(run+"/../scidex-analysis-other/secret.txt") + ")", fsAbsent},

		// The host's processes are not in the pid namespace.
		{"signal 0 to a host process", "os.kill(int(os.environ['HOST_PID']), 0)", fsErr(syscall.ESRCH)},
		{"SIGKILL to a host process", "os.kill(int(os.environ['HOST_PID']), 9)", fsErr(syscall.ESRCH)},

		// The run directory is not noexec: Landlock grants execute there
		// (documented in the README), so an analysis may run its own tools.
		{"write a script in the run directory", "script(" + in(run, "tool.sh") + ")", fsOK},
		{"execute it", "run(" + in(run, "tool.sh") + ")", fsOK},
	}
	// Nothing of the host's homes shows through.
	hostHomes, err := os.ReadDir("/home")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range hostHomes {
		if p := "/home/" + e.Name(); p != jail.AnalysisHome {
			probes = append(probes, fsProbe{"stat host's " + p, "os.lstat(" + fsPy(p) + ")", fsAbsent})
		}
	}
	// Nothing of the host's /run shows through either.
	hostRun, err := os.ReadDir("/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hostRun {
		p := "/run/" + e.Name()
		probes = append(probes, fsProbe{"stat host's " + p, "os.lstat(" + fsPy(p) + ")", fsAbsent})
	}

	return probes
}

// fsCheck checks each probe's outcome in an analysis' stdout.
func fsCheck(t *testing.T, probes []fsProbe, stdout string) {
	t.Helper()
	got := fsParse(t, stdout)
	for _, p := range probes {
		g, found := got[p.name]
		if !found {
			t.Errorf("%s: no result from inside; stdout:\n%s", p.name, stdout)
			continue
		}
		o := fsOutcome(g.Errno)
		t.Logf("%s: %s", p.name, o)
		if !p.want.has(o) {
			t.Errorf("%s: %s = %s (%s), want %s", p.name, p.code, o, g.Detail, p.want)
		}
	}
}
