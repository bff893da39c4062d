package bench

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// A cgroup view gives a process tree cgroup hierarchies whose roots are
// this process' own cgroups, never touching the host's mounts: unshare -m
// -C --propagation private makes a new mount namespace (nothing mounted in
// it reaches the host's) and a new cgroup namespace, then a tmpfs covers
// /sys/fs/cgroup and the hierarchies are mounted below it from inside the
// new cgroup namespace, so each root is the cgroup this process is in. A
// program that makes its leaf at a hierarchy's root (crun's cgroupfs
// manager, nsproto -cg v1) then makes it below our cgroups, as the jail's
// leaves are. The mounts die with the namespace, that is with the last
// process in it; the view's first process dies with the bench (Pdeathsig).
//
// On this hybrid host the memory hierarchy is where it matters: this
// process' memory cgroup is a platform's (/process_api/<id>), and nothing
// of ours may make cgroups outside it.

// cgroupView is the hierarchies a view mounts.
type cgroupView struct {
	V1      []string // v1 controllers, one hierarchy each at /sys/fs/cgroup/<controller>
	Unified bool     // cgroup2 at /sys/fs/cgroup/unified, as on the host
}

// viewControllers are the v1 hierarchies of every view: those the jail
// makes its v1 leaves in (crun and nsproto make leaves only where a
// hierarchy is mounted, nsproto in memory, cpu and pids).
var viewControllers = []string{"memory", "cpu", "cpuacct", "pids"}

// viewScript mounts the view's hierarchies, named by its arguments up to
// "--" ("unified" is cgroup2), then execs the rest.
const viewScript = `set -e
mount -t tmpfs -o mode=0755 scidex-bench-cgroups /sys/fs/cgroup
while [ "$1" != -- ]; do
	mkdir "/sys/fs/cgroup/$1"
	if [ "$1" = unified ]; then
		mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
	else
		mount -t cgroup -o "$1" cgroup "/sys/fs/cgroup/$1"
	fi
	shift
done
shift
exec "$@"`

// cmd runs command in a new view v. It is killed when the thread that
// started it exits, so with the bench even when the bench is killed.
func (v cgroupView) cmd(command ...string) *exec.Cmd {
	args := append([]string{"-m", "-C", "--propagation", "private", "sh", "-c", viewScript, "sh"}, v.V1...)
	if v.Unified {
		args = append(args, "unified")
	}
	c := exec.Command("unshare", append(append(args, "--"), command...)...)
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return c
}

// viewUnavailable says why no view can be made here, or nil. The mounts
// themselves may still be refused; the view's first run says so.
func viewUnavailable() error {
	if os.Geteuid() != 0 {
		return errors.New("not root: a cgroup view (unshare -m -C, tmpfs and cgroup mounts) needs root; run the bench as root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return errors.New("unshare not found: a cgroup view needs util-linux's unshare (apt-get install -y util-linux)")
	}
	return nil
}

// TestCgroupView runs `cat` in each view: inside, every hierarchy of the
// view is mounted at /sys/fs/cgroup/<name> with its root at the cgroup cat
// is in, and the host's mounts are as they were.
func TestCgroupView(t *testing.T) {
	if err := viewUnavailable(); err != nil {
		t.Skip(err)
	}
	if nsprotoCgroup() == "v2" {
		t.Skip("/sys/fs/cgroup is cgroup v2: no v1 hierarchy to mount, and nsproto needs no view here")
	}
	before, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		view cgroupView
	}{{"crun", crunView}, {"nsproto", nsprotoView}} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.view.cmd("sh", "-c", "cat /proc/self/cgroup; echo ==; cat /proc/self/mountinfo").CombinedOutput()
			if err != nil {
				t.Fatalf("%v.cmd(cat): %v\n%s", tt.view, err, out)
			}
			self, mountinfo, _ := strings.Cut(string(out), "==\n")
			mounts, err := testutil.ParseMountinfo(mountinfo)
			if err != nil {
				t.Fatal(err)
			}
			cgs, err := testutil.PlaceCgroups(self, mounts)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(tt.view.V1)
			if tt.view.Unified {
				want = append(want, "unified")
			}
			for _, cg := range cgs {
				name := "unified"
				if cg.Version == 1 {
					name = cg.Controllers[0]
				}
				if !slices.Contains(want, name) {
					continue
				}
				want = slices.DeleteFunc(want, func(s string) bool { return s == name })
				if d := "/sys/fs/cgroup/" + name; cg.Path != "/" || !slices.Equal(cg.Dirs, []string{d}) {
					t.Errorf("in %v, %s: path %s, dirs %q, want / at %s", tt.view, name, cg.Path, cg.Dirs, d)
				}
			}
			if len(want) > 0 {
				t.Errorf("in %v, /proc/self/cgroup has no line for %q:\n%s", tt.view, want, self)
			}
		})
	}
	if after, err := os.ReadFile("/proc/self/mountinfo"); err != nil || string(after) != string(before) {
		t.Errorf("the host's mounts changed after the views (%v):\nbefore:\n%s\nafter:\n%s", err, before, after)
	}
}
