package request

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
)

// builtins is a profiles file that adds nothing to the built-ins, so that
// the test does not read the host's installed one.
func builtins(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "profiles.json")
	if err := os.WriteFile(p, []byte(`{"profiles": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResolve: a request's values over its profile's, relative paths
// from its directory.
func TestResolve(t *testing.T) {
	cwd := t.TempDir()
	if err := os.Mkdir(filepath.Join(cwd, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := builtins(t)
	def := profile.Builtins()["default"].Spec()
	uid, gid := 4242, 4243
	cases := []struct {
		name  string
		req   Request
		check func(t *testing.T, s *jail.Spec)
	}{
		{"the profile's values", Request{}, func(t *testing.T, s *jail.Spec) {
			if s.Profile != "default" || s.Limits != def.Limits || s.TmpRoot != jail.DefaultTmpRoot || s.Root != cwd || s.Net != def.Net {
				t.Errorf("Resolve({}) = profile %q, limits %v, tmp root %q, root %q, net %q; want default's, %s, %s", s.Profile, s.Limits, s.TmpRoot, s.Root, s.Net, jail.DefaultTmpRoot, cwd)
			}
		}},
		{"relative paths from cwd", Request{Root: "in", ReadOnly: []string{"in"}, Inputs: []string{"in/../in"}, Report: "r.json", Collect: "out"}, func(t *testing.T, s *jail.Spec) {
			in := cwd + "/in"
			if s.Root != in || !slices.Contains(s.ReadOnly, in) || !slices.Contains(s.ReadOnly, cwd+"/in/../in") || s.Report != cwd+"/r.json" || s.Collect != cwd+"/out" {
				t.Errorf("Resolve = root %q, read-only %q, report %q, collect %q; want them under %s", s.Root, s.ReadOnly, s.Report, s.Collect, cwd)
			}
		}},
		{"a smaller memory bounds the tmpfs sizes", Request{Limits: map[string]string{"memory": "32M"}}, func(t *testing.T, s *jail.Spec) {
			for _, l := range []*limits.Limit{limits.Memory, limits.Disk, limits.Shm} {
				if got := s.Limits.Int(l); got != 32<<20 {
					t.Errorf("Resolve(memory 32M): %s = %d, want %d", l.Name, got, 32<<20)
				}
			}
			if !s.From.Given(limits.Memory) || s.From.Given(limits.Disk) {
				t.Errorf("Resolve(memory 32M): memory given %t, disk given %t; want true, false", s.From.Given(limits.Memory), s.From.Given(limits.Disk))
			}
			if got, want := s.From.Name(limits.Disk), "profiles.default.disk"; got != want {
				t.Errorf("Resolve(memory 32M): From.Name(disk) = %q, want %q (the profile's, though it followed)", got, want)
			}
		}},
		{"a disk given stays", Request{Limits: map[string]string{"memory": "1G", "disk": "2G", "timeout": "none"}}, func(t *testing.T, s *jail.Spec) {
			if s.Limits.Int(limits.Disk) != 2<<30 || s.Limits.Int(limits.Timeout) != 0 {
				t.Errorf("Resolve(disk 2G, timeout none) = disk %d, timeout %d; want %d, 0", s.Limits.Int(limits.Disk), s.Limits.Int(limits.Timeout), 2<<30)
			}
		}},
		{"fixed ids", Request{UID: &uid, GID: &gid, UIDRange: "5000-6000"}, func(t *testing.T, s *jail.Spec) {
			if s.HostUID != uid || s.HostGID != gid || s.UIDRange.First != 5000 || s.UIDRange.Last != 6000 {
				t.Errorf("Resolve(uid, gid, range) = %d:%d %v", s.HostUID, s.HostGID, s.UIDRange)
			}
		}},
		{"net, ports, env, opt-ins", Request{Profile: "notebook", Net: "host", AllowTCP: []uint16{443}, Env: []string{"A=B"}, UnsafeDisable: []string{"seccomp"}, AllowDegraded: []string{"landlock"}}, func(t *testing.T, s *jail.Spec) {
			want := promise.OptIns{{Kind: promise.OptInDisable, Protection: "seccomp"}, {Kind: promise.OptInDegrade, Protection: "landlock"}}
			if s.Net != "host" || !slices.Equal(s.AllowTCP, []uint16{443}) || !slices.Contains(s.Env, "A=B") || !slices.Equal(s.OptIns, want) {
				t.Errorf("Resolve = net %q, ports %v, env %q, opt-ins %v; want host, 443, A=B, %v", s.Net, s.AllowTCP, s.Env, s.OptIns, want)
			}
			if got, want := s.From.NameAt(option.Env, len(s.Env)-1), "request field env"; got != want {
				t.Errorf("Resolve: From.NameAt(env, last) = %q, want %q", got, want)
			}
		}},
		{"egress hosts and ranges", Request{Net: "egress", AllowHosts: []string{"api.example.org", "*"}, AllowRanges: []string{"10.20.0.0/16"}}, func(t *testing.T, s *jail.Spec) {
			if s.Net != "egress" || !slices.Equal(s.AllowHosts, []string{"api.example.org", "*"}) || !slices.Equal(s.AllowRanges, []string{"10.20.0.0/16"}) {
				t.Errorf("Resolve = net %q, hosts %q, ranges %q; want the request's", s.Net, s.AllowHosts, s.AllowRanges)
			}
			// The run's check names the entry as the request gave it.
			if _, err := s.Validate(); err == nil || !strings.Contains(err.Error(), `request field allow_hosts host entry "*": a bare * would allow every host`) {
				t.Errorf("Validate(allow_hosts *) = %v, want it refused naming the request field", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req
			r.ID, r.Command, r.Cwd, r.Config = "x", []string{"/bin/true"}, cwd, cfg
			s, err := r.Resolve(option.RequestField)
			if err != nil {
				t.Fatalf("Resolve(%+v) = %v, want a spec", r, err)
			}
			if s.ID != "x" || !slices.Equal(s.Command, r.Command) {
				t.Errorf("Resolve = id %q, command %q; want the request's", s.ID, s.Command)
			}
			tc.check(t, s)
		})
	}
}

// TestResolveRefused: a value Resolve cannot use is a FieldError naming
// the field, in the request's words or the Namer's.
func TestResolveRefused(t *testing.T) {
	cwd := t.TempDir()
	cfg := builtins(t)
	one := 1
	cases := []struct {
		name  string
		req   Request
		field string
		want  string // in the message, the request's names
	}{
		{"a size that is not one", Request{Limits: map[string]string{"memory": "lots"}}, "limits.memory", `request field limits.memory: size "lots"`},
		{"a refused zero", Request{Limits: map[string]string{"cpus": "0"}}, "limits.cpus", "request field limits.cpus: 0 CPUs is refused"},
		{"no such limit", Request{Limits: map[string]string{"memroy": "1G"}}, "limits.memroy", "request field limits.memroy: no such limit; known: timeout, grace, memory"},
		{"a missing read-only path", Request{ReadOnly: []string{"/nonexistent/x"}}, "read_only", `request field read_only "/nonexistent/x" does not exist`},
		{"a missing relative read-write path", Request{ReadWrite: []string{"nope"}}, "read_write", `request field read_write "` + cwd + `/nope" does not exist`},
		{"a missing input", Request{Inputs: []string{"/nonexistent/in"}}, "inputs", `request field inputs "/nonexistent/in" does not exist`},
		{"no input for a profile that reads one", Request{Profile: "post_process"}, "inputs", "profile post_process reads earlier outputs: give them with request field inputs DIR"},
		{"no such profile", Request{Profile: "nope"}, "profile", `request field profile "nope": no such profile; known: default, notebook, post_process, tool`},
		{"no such profiles file", Request{Config: "missing.json"}, "config", cwd + "/missing.json"},
		{"a relative cwd", Request{Cwd: "rel"}, "cwd", `cwd "rel": give the absolute directory`},
		{"uid alone", Request{UID: &one}, "gid", "request field uid and request field gid go together"},
		{"a bad range", Request{UIDRange: "9-1"}, "uid_range", `request field uid_range: unusable uid range: "9-1"`},
		{"no such layer", Request{UnsafeDisable: []string{"nope"}}, "unsafe_disable", `"nope"`},
		{"port 0", Request{Net: "host", AllowTCP: []uint16{0}}, "allow_tcp", "request field allow_tcp 0: give TCP port numbers 1-65535"},
		{"no such network mode", Request{Net: "internet"}, "net", `request field net "internet": choose none, loopback, host or egress`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req
			r.ID, r.Command = "x", []string{"/bin/true"}
			if r.Cwd == "" {
				r.Cwd = cwd
			}
			if r.Config == "" {
				r.Config = cfg
			}
			_, err := r.Resolve(option.RequestField)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, jail.ErrBadSpec) {
				t.Fatalf("Resolve(%+v) = %v; want a bad spec, field %s, saying %q", r, err, tc.field, tc.want)
			}
		})
	}
	// The command line's words, and Python's.
	r := Request{ID: "x", Command: []string{"/bin/true"}, Cwd: cwd, Config: cfg, Limits: map[string]string{"memory": "lots"}, ReadOnly: []string{"/nonexistent/x"}}
	if _, err := r.Resolve(option.Flag); err == nil || !strings.HasPrefix(err.Error(), `invalid run specification: --ro "/nonexistent/x" does not exist`) {
		t.Errorf("Resolve(read_only /nonexistent/x, over flags) = %v, want it named --ro", err)
	}
	r.ReadOnly = nil
	if _, err := r.Resolve(option.Keyword); err == nil || !strings.HasPrefix(err.Error(), `invalid run specification: keyword memory: size "lots"`) {
		t.Errorf("Resolve(memory lots, over keywords) = %v, want it named keyword memory", err)
	}
}
