package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/server"
)

// TestRequestParserForgets: the server reads every request with one kong
// model of run's grammar. For every flag of that grammar (taken from the
// model, so a new flag is covered or this test names it), a request that
// gives the flag, then one that does not: each gets the spec a parser of
// its own would give, and the first request's spec is not changed by the
// second's parse.
func TestRequestParserForgets(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "profiles.json")
	if err := os.WriteFile(cfg, []byte(`{"profiles": {"default": {"pids": 77}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Values tried in turn for a flag that takes one: the first that
	// parses and changes the spec is used.
	values := []string{cfg, "7", "1s", "3G", "/usr", "dir", "A=B", "landlock", "seccomp", "notebook", "loopback", "443", "4242", "5000-6000"}
	// Flags that are given only with another.
	with := map[string][]string{"uid": {"--gid", "8"}, "gid": {"--uid", "8"}}
	cwd := dir
	command := []string{"/usr/bin/true"}
	fresh := func(args []string) (*jail.Spec, error) {
		var c cli
		c.Run.afterDash = command
		if _, err := parse(&c, append([]string{"run"}, args...), kong.Writers(io.Discard, io.Discard)); err != nil {
			return nil, err
		}
		if c := &c.Run.Config; *c != "" && !filepath.IsAbs(*c) {
			*c = filepath.Join(cwd, *c)
		}
		return c.Run.specIn(cwd)
	}
	base := []string{"--id", "base"}
	want, err := fresh(base)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newParser(new(cli), []string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	rp := new(requestParser)
	req := func(args []string) *server.Request {
		return &server.Request{Op: "run", Req: "r", Cwd: cwd, Args: args, Command: command}
	}
	tested := 0
	for _, f := range p.k.Model.Node.Children[0].Flags {
		if f.Name == "help" || notServed(f.Name) {
			continue
		}
		tested++
		var args []string
		var spec *jail.Spec
		tries := values
		if f.IsBool() {
			tries = []string{""}
		}
		for _, v := range tries {
			a := []string{"--" + f.Name}
			if v != "" {
				a = append(a, v)
			}
			a = append(a, with[f.Name]...)
			if f.Name != "id" {
				a = append(a, base...)
			}
			if s, err := fresh(a); err == nil && !reflect.DeepEqual(s, want) {
				args, spec = a, s
				break
			}
		}
		if args == nil {
			t.Errorf("--%s: none of the test's values parses and changes the spec; add one that does", f.Name)
			continue
		}
		got, err := rp.spec(req(args))
		if err != nil || !reflect.DeepEqual(got, spec) {
			t.Errorf("%s: reused parser gave %+v, %v; a fresh one %+v", strings.Join(args, " "), got, err, spec)
		}
		after, err := rp.spec(req(base))
		if err != nil || !reflect.DeepEqual(after, want) {
			t.Errorf("after %s, %s: reused parser gave %+v, %v; a fresh one %+v", strings.Join(args, " "), strings.Join(base, " "), after, err, want)
		}
		if !reflect.DeepEqual(got, spec) {
			t.Errorf("%s: its spec changed when the next request was read: %+v, want %+v", strings.Join(args, " "), got, spec)
		}
	}
	if tested < 20 {
		t.Errorf("tested %d flags of run; the grammar has more", tested)
	}
}

// notServed says whether --name is one of run's flags that a request may
// not give.
func notServed(name string) bool {
	for _, no := range notInServe {
		if no == "--"+name {
			return true
		}
	}
	return false
}
