package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/request"
)

// clientOnly are run's flags that are the process's own, not the run's:
// the request has no field for them.
var clientOnly = []string{"server", "summary", "ready-fd", "help"}

// resolved is the spec of the run command line c asks for, in dir, as
// run resolves it.
func resolved(t *testing.T, c *cli, dir string) *jail.Spec {
	t.Helper()
	r := c.Run.request(dir)
	s, err := r.Resolve(option.Flag)
	if err != nil {
		t.Fatalf("Resolve(%+v) = %v", r, err)
	}
	return s
}

// TestRunRequest: the command line's flags become the request's fields,
// the client's own flags none, relative paths as given (the request's
// cwd is what they are taken from).
func TestRunRequest(t *testing.T) {
	uid, gid := 7, 8
	cases := []struct {
		args []string
		want func(r *request.Request)
	}{
		{[]string{"--keep", "--server", "/s", "--summary", "none", "--ready-fd", "4"}, func(r *request.Request) { r.Keep = true }},
		{[]string{"-p", "tool", "--config", "p.json", "--report=r.json", "--collect", "out", "--collect-merge"}, func(r *request.Request) {
			r.Profile, r.Config, r.Report, r.Collect, r.CollectMerge = "tool", "p.json", "r.json", "out", true
		}},
		{[]string{"--memory", "512M", "--timeout=none", "--output-bytes", "1G"}, func(r *request.Request) {
			r.Limits = map[string]string{"memory": "512M", "timeout": "none", "output_bytes": "1G"}
		}},
		{[]string{"--ro", "a", "--ro", "/b", "--rw", "c", "--input", "d", "--root", "e", "--env", "A=--server"}, func(r *request.Request) {
			r.ReadOnly, r.ReadWrite, r.Inputs, r.Root, r.Env = []string{"a", "/b"}, []string{"c"}, []string{"d"}, "e", []string{"A=--server"}
		}},
		{[]string{"--net", "host", "--allow-tcp", "443,8443", "--uid", "7", "--gid", "8", "--uid-range", "5-9", "--unsafe-disable", "seccomp", "--allow-degraded", "landlock"}, func(r *request.Request) {
			r.Net, r.AllowTCP, r.UID, r.GID, r.UIDRange = "host", []uint16{443, 8443}, &uid, &gid, "5-9"
			r.UnsafeDisable, r.AllowDegraded = []string{"seccomp"}, []string{"landlock"}
		}},
	}
	for _, tc := range cases {
		c, err := parseQuiet(t, append([]string{"run", "--id", "x"}, tc.args...)...)
		if err != nil {
			t.Fatalf("parse(%q) = %v", tc.args, err)
		}
		c.Run.afterDash = []string{"/bin/true"}
		want := request.Request{ID: "x", Command: []string{"/bin/true"}, Cwd: "/w/d", Profile: "default", TmpRoot: "/tmp", UIDRange: "1879048192-1879113727", Limits: map[string]string{}}
		tc.want(&want)
		if got := c.Run.request("/w/d"); !reflect.DeepEqual(got, want) {
			t.Errorf("request(%q) = %+v, want %+v", tc.args, got, want)
		}
	}
}

// TestRunRequestCarriesEveryFlag: every flag of run but the client's own
// gives a field of the request (a new flag is covered, or this test names
// it); jail/request's TestRequestFieldsAreRows holds the fields to the
// rows' request names.
func TestRunRequestCarriesEveryFlag(t *testing.T) {
	dir := t.TempDir()
	values := []string{"7", "1s", "3G", "/usr", "A=B", "landlock", "seccomp", "notebook", "loopback", "443", "5000-6000", filepath.Join(dir, "p.json")}
	base, err := parseQuiet(t, "run", "--id", "base")
	if err != nil {
		t.Fatal(err)
	}
	want := base.Run.request(dir)
	p, err := newParser(new(cli), []string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.k.Model.Node.Children[0].Flags {
		if slices.Contains(clientOnly, f.Name) || f.Name == "id" {
			continue
		}
		tries := values
		if f.IsBool() {
			tries = []string{""}
		}
		changed := false
		for _, v := range tries {
			a := []string{"run", "--id", "base", "--" + f.Name}
			if v != "" {
				a = append(a, v)
			}
			if c, err := parseQuiet(t, a...); err == nil && !reflect.DeepEqual(c.Run.request(dir), want) {
				changed = true
				break
			}
		}
		if !changed {
			t.Errorf("--%s: none of the test's values changes the request; give it a field (run.go's request) or a value here that does", f.Name)
		}
	}
	// What the request's JSON is: its fields by the request's names.
	b, _ := json.Marshal(want)
	if !strings.Contains(string(b), `"id":"base"`) || !strings.Contains(string(b), `"cwd":"`+dir+`"`) {
		t.Errorf("the request as JSON = %s, want its id and cwd", b)
	}
}
