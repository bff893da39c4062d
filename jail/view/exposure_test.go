package view

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

func TestCheckExposure(t *testing.T) {
	// A rootless caller alice (1001:1002) who keeps users (100) and lab (1003).
	type idMap struct {
		uid, gid int
		groups   []report.HostGroup
	}
	ids := idMap{1001, 1002, []report.HostGroup{
		{GID: 1002, Name: "alice", InsideGID: 1000}, {GID: 100, Name: "users", InsideGID: 65534}, {GID: 1003, Name: "lab", InsideGID: 65534},
	}}
	cases := []struct {
		name    string
		ids     idMap
		exposed []ExposedPath
		want    string // substring of the error; "": nil
	}{
		{"world-readable", ids, []ExposedPath{{"/srv/data", 0, 1003, 0o755}}, ""},
		{"group-only read", ids, []ExposedPath{{"/srv/data", 0, 1003, 0o750}}, "group lab (gid 1003) kept: the run's view shows /srv/data (mode 0750, group lab)"},
		{"group-only file", ids, []ExposedPath{{"/etc/x.key", 0, 100, 0o640}}, "supplementary group users (gid 100)"},
		{"group-only write", ids, []ExposedPath{{"/srv/out", 0, 1003, 0o775}}, "/srv/out (mode 0775"},
		{"group gets less than others", ids, []ExposedPath{{"/srv/deny", 0, 1003, 0o705}}, ""},
		{"a group not kept", ids, []ExposedPath{{"/etc/ssl/private", 0, 103, 0o710}}, ""},
		{"the caller's own gid", ids, []ExposedPath{{"/home/alice/data", 0, 1002, 0o750}}, ""},
		{"owned by the caller", ids, []ExposedPath{{"/home/alice/lab", 1001, 1003, 0o750}}, ""},
		{"second of several", ids, []ExposedPath{{"/usr", 0, 0, 0o755}, {"/srv/data", 0, 1003, 0o750}}, "/srv/data"},
		{"root run", idMap{65534, 65534, nil}, []ExposedPath{{"/srv/data", 0, 1003, 0o750}}, ""},
		{"nameless group", idMap{1001, 1002, []report.HostGroup{{GID: 4242, InsideGID: 65534}}},
			[]ExposedPath{{"/srv/data", 0, 4242, 0o750}}, "group 4242 (gid 4242)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckExposure(c.ids.uid, c.ids.gid, c.ids.groups, c.exposed)
			var ge *GroupExposureError
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CheckExposure(%s) = %v, want nil", c.name, err)
			case c.want != "" && (!errors.As(err, &ge) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("CheckExposure(%s) = %v, want a *GroupExposureError containing %q", c.name, err, c.want)
			case c.want != "" && !strings.Contains(err.Error(), "setpriv --reuid=1001 --regid=1002 --clear-groups"):
				t.Errorf("CheckExposure(%s) = %v, want the fix with setpriv --clear-groups", c.name, err)
			}
		})
	}
}

// TestWalkExposed: the walk lists every file and directory with its mode,
// and no link (a link's target is shown where it lies, or not at all).
func TestWalkExposed(t *testing.T) {
	root := t.TempDir()
	if err := os.Chmod(root, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		path string
		mode os.FileMode
		dir  bool
	}{{"a", 0o755, true}, {"a/deep", 0o710, true}, {"a/deep/key", 0o640, false}, {"f", 0o644, false}} {
		p := filepath.Join(root, d.path)
		var err error
		if d.dir {
			err = os.Mkdir(p, d.mode)
		} else {
			err = os.WriteFile(p, nil, d.mode)
		}
		if err == nil {
			err = os.Chmod(p, d.mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/shadow", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	got := map[string]os.FileMode{}
	for _, e := range walkExposed(root) {
		rel, _ := filepath.Rel(root, e.Path)
		got[rel] = e.Mode
	}
	want := map[string]os.FileMode{".": 0o750, "a": 0o755, "a/deep": 0o710, "a/deep/key": 0o640, "f": 0o644}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walkExposed = %v, want %v", got, want)
	}
}
