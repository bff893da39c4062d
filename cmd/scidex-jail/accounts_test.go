package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestAccountRootless is issue 22's reproduction: a real account with
// supplementary groups runs the jail rootless, through su (PAM, as a
// login) and through setpriv --init-groups (as a service's User=). The run
// is ok, the report names the groups kept, and inside the analysis is
// uid 1000 "analysis", its kept groups shown as nogroup. With the groups
// cleared (setpriv --clear-groups, the fix a refused run names) nothing is
// kept.
func TestAccountRootless(t *testing.T) {
	a := newAccount(t)
	cases := []struct {
		name     string
		cmd      func(args []string) *exec.Cmd
		wantKept []report.HostGroup
	}{
		{"su", func(args []string) *exec.Cmd {
			q := make([]string, len(args))
			for i, s := range args {
				q[i] = shellQuote(s)
			}
			return a.su(strings.Join(q, " "))
		}, []report.HostGroup{{GID: a.UsersGID, Name: "users", InsideGID: 65534}, {GID: a.GroupGID, Name: a.Group, InsideGID: 65534}}},
		{"setpriv --init-groups", func(args []string) *exec.Cmd { return a.setpriv(args...) },
			[]report.HostGroup{{GID: a.UsersGID, Name: "users", InsideGID: 65534}, {GID: a.GroupGID, Name: a.Group, InsideGID: 65534}}},
		{"setpriv --clear-groups", func(args []string) *exec.Cmd {
			cmd := exec.Command("setpriv", append([]string{"--reuid=" + a.Name, "--regid=" + a.Name, "--clear-groups", "--"}, args...)...)
			cmd.Dir = "/"
			return cmd
		}, []report.HostGroup{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := a.tmpRootFor(t)
			rep := filepath.Join(tmp, "report.json")
			r := runAs(t, c.cmd([]string{jailBin, "run", "--id", "acct", "--tmp-root", tmp, "--report", rep,
				"--unsafe-disable", "cgroup", "--", "/usr/bin/id"}), rep)
			wantStatus(t, r, report.StatusOK, 0)
			if want := "uid=1000(analysis) gid=1000(analysis) groups=1000(analysis)"; !strings.HasPrefix(r.stdout, want) {
				t.Errorf("id inside = %q, want it to start with %q", r.stdout, want)
			}
			if len(c.wantKept) > 0 && !strings.Contains(r.stdout, ",65534(nogroup)") {
				t.Errorf("id inside = %q, want the kept groups shown as 65534(nogroup)", r.stdout)
			}
			if strings.Contains(r.stdout, a.Name) || strings.Contains(r.stdout, a.Group) {
				t.Errorf("id inside = %q names the host account or its group", r.stdout)
			}
			e := r.report.Enforced
			if e.HostUID != a.UID || e.HostGID != a.GID {
				t.Errorf("host uid:gid = %d:%d, want the account's %d:%d", e.HostUID, e.HostGID, a.UID, a.GID)
			}
			if !slices.Equal(e.Identity.HostGroupsKept, c.wantKept) {
				t.Errorf("identity.host_groups_kept = %+v, want %+v", e.Identity.HostGroupsKept, c.wantKept)
			}
			if len(c.wantKept) > 0 && (!strings.Contains(e.Identity.Why, "cannot drop supplementary groups") ||
				!slices.Equal(e.Identity.HeldBy, []promise.Layer{promise.LayerMountView, promise.LayerLandlockFS})) {
				t.Errorf("identity = %+v, want why (cannot drop) and held by mount view and landlock fs", e.Identity)
			}
			if got := entries(t, tmp); !slices.Equal(got, []string{"report.json"}) {
				t.Errorf("tmp-root after the run holds %v, want only the report", got)
			}
		})
	}
}

// TestAnalysisIdentity: inside, the user database names the analysis'
// user, with the HOME its environment has, and no host account, as root
// and rootless.
func TestAnalysisIdentity(t *testing.T) {
	a := newAccount(t)
	script := `import getpass, grp, os, pwd
p = pwd.getpwuid(os.getuid())
print(getpass.getuser(), p.pw_name, p.pw_uid, p.pw_dir == os.environ["HOME"], grp.getgrgid(os.getgid()).gr_name)
print(sorted(e.pw_name for e in pwd.getpwall()))`
	for _, rootless := range []bool{false, true} {
		t.Run("rootless="+strconv.FormatBool(rootless), func(t *testing.T) {
			tmp := a.tmpRootFor(t)
			rep := filepath.Join(tmp, "report.json")
			args := []string{jailBin, "run", "--id", "ident", "--tmp-root", tmp, "--report", rep, "--", "/usr/bin/python3", "-c", script}
			var cmd *exec.Cmd
			if rootless {
				args = slices.Insert(args, slices.Index(args, "--"), "--unsafe-disable", "cgroup")
				cmd = a.setpriv(args...)
			} else {
				cmd = exec.Command(args[0], args[1:]...)
			}
			r := runAs(t, cmd, rep)
			wantStatus(t, r, report.StatusOK, 0)
			if want := "analysis analysis 1000 True analysis\n['analysis', 'nobody']\n"; r.stdout != want {
				t.Errorf("inside: %q, want %q", r.stdout, want)
			}
			if g := r.report.Enforced.Mounts.Generated; !slices.Equal(g, []string{"/etc/passwd", "/etc/group"}) {
				t.Errorf("mounts.generated = %q, want /etc/passwd and /etc/group", g)
			}
		})
	}
}

// TestAccountGroupSecret: a file the account reads only through a
// supplementary group (mode 0640, in a 0750 directory of that group)
// stays out of the analysis' reach: outside the view, the mount view
// hides it; in /etc, which the view shows, Landlock refuses it. A run
// whose view would show it (bound with --ro, or /etc without Landlock) is
// refused before it starts, naming the group and the fix.
func TestAccountGroupSecret(t *testing.T) {
	a := newAccount(t)
	const secret = "sjt-group-secret"
	dir := filepath.Join(tmpRoot(t), "lab")
	inTmp := filepath.Join(dir, "secret.txt")
	inEtc := "/etc/" + a.Name + ".secret"
	// As /etc/ssl/private's keys; after inEtc in the walk's (lexical) order.
	deepInEtc := "/etc/" + a.Name + "_d/deep/secret"
	t.Cleanup(func() {
		os.Remove(inEtc)
		os.RemoveAll(filepath.Dir(filepath.Dir(deepInEtc)))
	})
	platform := groupPlatform(t, a, secret)
	inData := filepath.Join(platform, "data", "secret.txt")
	for _, f := range []string{inTmp, inEtc, deepInEtc} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(secret), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(f, 0, a.GroupGID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(dir, 0, a.GroupGID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	// The account does read both on the host, through the group.
	for _, f := range []string{inTmp, inEtc, deepInEtc} {
		if out, err := a.setpriv("/bin/cat", f).Output(); err != nil || string(out) != secret {
			t.Fatalf("cat %s as %s on the host = %q, %v; want the secret (the test's premise)", f, a.Name, out, err)
		}
	}
	cases := []struct {
		name   string
		flags  []string
		file   string
		status report.Status
		code   int
		want   []string // in the setup error's message
		before func()   // runs before the case
	}{
		{"outside the view", nil, inTmp, report.StatusExitNonzero, 1, nil, nil},
		{"in /etc, under Landlock", nil, inEtc, report.StatusExitNonzero, 1, nil, nil},
		{"bound with --ro", []string{"--ro", dir}, inTmp, report.StatusSetupError, 125,
			[]string{"supplementary group " + a.Group, dir + " (mode 0750", "setpriv --reuid=" + strconv.Itoa(a.UID), "--clear-groups", "SupplementaryGroups="}, nil},
		{"in /etc, without Landlock", []string{"--unsafe-disable", "landlock"}, inEtc, report.StatusSetupError, 125,
			[]string{"supplementary group " + a.Group, inEtc + " (mode 0640", "--clear-groups"}, nil},
		{"deep in /etc, under Landlock", nil, deepInEtc, report.StatusExitNonzero, 1, nil, nil},
		{"deep in /etc, without Landlock", []string{"--unsafe-disable", "landlock"}, deepInEtc, report.StatusSetupError, 125,
			[]string{"supplementary group " + a.Group, deepInEtc + " (mode 0640", "--clear-groups"},
			// The walk would find inEtc first: make it everyone's.
			func() { os.Chmod(inEtc, 0o644) }},
		{"the platform's data dir", []string{"--root", platform}, inData, report.StatusSetupError, 125,
			[]string{"supplementary group " + a.Group, filepath.Join(platform, "data") + " (mode 0750", "--clear-groups"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				c.before()
			}
			tmp := a.tmpRootFor(t)
			rep := filepath.Join(tmp, "report.json")
			args := append([]string{jailBin, "run", "--id", "secret", "--tmp-root", tmp, "--report", rep, "--unsafe-disable", "cgroup"}, c.flags...)
			r := runAs(t, a.setpriv(append(args, "--", "/bin/cat", c.file)...), rep)
			wantStatus(t, r, c.status, c.code)
			if strings.Contains(r.stdout, secret) {
				t.Fatalf("the analysis read the group's secret %s: stdout %q", c.file, r.stdout)
			}
			if c.want == nil {
				return
			}
			se := r.report.SetupError
			if se == nil || se.Stage != "promises" || strings.Contains(se.Message, "bug:") {
				t.Fatalf("setup_error = %+v, want stage promises, no bug: message", se)
			}
			for _, w := range c.want {
				if !strings.Contains(se.Message, w) {
					t.Errorf("setup_error.message = %q, want it to contain %q", se.Message, w)
				}
			}
		})
	}
}

// groupPlatform is a platform checkout whose data/ (mode 0750) only a's
// fresh group opens, holding a secret (0640).
func groupPlatform(t *testing.T, a account, secret string) string {
	t.Helper()
	platform := filepath.Join(tmpRoot(t), "platform")
	data := filepath.Join(platform, "data")
	if err := os.MkdirAll(data, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "secret.txt"), []byte(secret), 0o640); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{data, filepath.Join(data, "secret.txt")} {
		if err := os.Chown(p, 0, a.GroupGID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(platform, 0o755); err != nil {
		t.Fatal(err)
	}
	return platform
}

// TestAccountCheck: `check` as a real account names the groups a run
// would keep, and says MISSING, with the fix, from a checkout whose data
// dir only one of them opens.
func TestAccountCheck(t *testing.T) {
	a := newAccount(t)
	platform := groupPlatform(t, a, "sjt-group-secret")
	cases := []struct {
		name string
		dir  string
		code int
		want []string
	}{
		{"groups kept", "/", -1, []string{"OK       identity: ", "users (" + strconv.Itoa(a.UsersGID) + "), " + a.Group, "mount view, landlock fs"}},
		{"a data dir of a kept group", platform, 1, []string{"MISSING  identity: ", "the run's view shows " + filepath.Join(platform, "data"), "fix: start the jail without the group", "--clear-groups"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := a.setpriv(jailBin, "check", "--tmp-root", a.tmpRootFor(t))
			cmd.Dir = c.dir
			out, err := cmd.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("check as %s: %v", a.Name, err)
			}
			if c.code >= 0 && code != c.code {
				t.Errorf("check exit = %d, want %d\n%s", code, c.code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("check output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
