package profile

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/egress"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// parseWant is what one ParseProfiles case expects: an error holding
// errText, or profile name's value after want modifies a copy of its
// starting point (from).
type parseWant struct {
	errText string
	name    string
	from    string // built-in the profile starts from
	want    func(p *Profile)
}

func TestParseProfiles(t *testing.T) {
	cases := []struct {
		name string
		file string
		parseWant
	}{
		{"empty file object", `{}`, parseWant{errText: "profiles: want an object of profile objects: empty value"}},
		{"no profiles", `{"profiles": {}}`, parseWant{name: "tool", from: "tool", want: func(*Profile) {}}},
		{"override a built-in field by field", `{"profiles": {"default": {"memory": "4G", "timeout": "2h"}}}`,
			parseWant{name: "default", from: "default", want: func(p *Profile) { p.Limits = with(p.Limits, L{limits.Memory: 4 << 30, limits.Timeout: 2 * time.Hour}) }}},
		{"override keeps the other fields", `{"profiles": {"notebook": {"cpus": 0.5}}}`,
			parseWant{name: "notebook", from: "notebook", want: func(p *Profile) { p.Limits.Set(limits.CPUQuota, limits.Float(0.5)) }}},
		{"every field", `{"profiles": {"tool": {"description": "d", "timeout": "1m", "grace": "2s", "memory": "1G", "swap": "64M",
			"disk": "2G", "shm": "1M", "cpus": 3, "pids": 90, "net": "host", "allow_tcp": [443, 8080], "db_ports": [5432, 3306],
			"data_dirs": ["x"], "read_only": ["/ro"], "read_write": ["/rw"], "env": ["A=1"], "allow_degraded": ["landlock"], "require_input": true,
			"output_entries": 500, "output_bytes": "1G", "output_file_bytes": "none", "output_time": "30s", "output_ignore": [".tox"], "stdio_bytes": "1M",
			"egress_connections": 10, "egress_upload": "1M", "egress_download": "none", "egress_connection_time": "1m"}}}`,
			parseWant{name: "tool", from: "tool", want: func(p *Profile) {
				*p = Profile{Name: "tool", Description: "d", Limits: limits.Of(L{limits.Timeout: time.Minute, limits.Grace: 2 * time.Second, limits.Memory: 1 << 30, limits.Swap: 64 << 20,
					limits.Disk: 2 << 30, limits.Shm: 1 << 20, limits.CPUQuota: 3, limits.PIDs: 90,
					limits.OutputEntries: 500, limits.OutputBytes: 1 << 30, limits.OutputTime: 30 * time.Second, limits.StdioBytes: 1 << 20,
					limits.EgressConnections: 10, limits.EgressUpload: 1 << 20, limits.EgressConnTime: time.Minute}), Permissions: Permissions{Net: "host", AllowTCP: []uint16{443, 8080}, DBPorts: []uint16{5432, 3306},
					DataDirs: []string{"x"}, ReadOnly: []string{"/ro"}, ReadWrite: []string{"/rw"}, Env: []string{"A=1"},
					AllowDegraded: []promise.Protection{promise.ProtectLandlock}, RequireInput: true, OutputIgnore: []string{".tox"}}}
			}}},
		{"output_ignore extended", `{"profiles": {"x": {"output_ignore": {"extend": [".tox", ".nox"]}}}}`,
			parseWant{name: "x", from: "default", want: func(p *Profile) {
				p.Name, p.OutputIgnore = "x", append(slices.Clone(runfiles.DefaultIgnore), ".tox", ".nox")
			}}},
		{"output_ignore emptied", `{"profiles": {"x": {"output_ignore": []}}}`,
			parseWant{name: "x", from: "default", want: func(p *Profile) { p.Name, p.OutputIgnore = "x", []string{} }}},
		{"output_ignore extends its base's", `{"profiles": {"a": {"base": "b", "output_ignore": {"extend": ["y"]}}, "b": {"output_ignore": ["x"]}}}`,
			parseWant{name: "a", from: "default", want: func(p *Profile) { p.Name, p.OutputIgnore = "a", []string{"x", "y"} }}},
		{"output_ignore a path", `{"profiles": {"x": {"output_ignore": ["a/b"]}}}`, parseWant{errText: `profiles.x.output_ignore: "a/b": give a name (no slash)`}},
		{"output_ignore dot-dot", `{"profiles": {"x": {"output_ignore": [".."]}}}`, parseWant{errText: `output_ignore: ".." is not the name of an entry`}},
		{"output_ignore twice", `{"profiles": {"x": {"output_ignore": {"extend": ["__pycache__"]}}}}`, parseWant{errText: `output_ignore: "__pycache__" is given twice`}},
		{"output_ignore other object", `{"profiles": {"x": {"output_ignore": {"add": ["y"]}}}}`, parseWant{errText: `profiles.x.output_ignore: want a list of names`}},
		{"output entries 0", `{"profiles": {"x": {"output_entries": 0}}}`, parseWant{errText: "profiles.x.output_entries: 0 entries is refused"}},
		{"output bytes 0", `{"profiles": {"x": {"output_bytes": "0"}}}`, parseWant{errText: "profiles.x.output_bytes: 0 bytes is refused"}},
		{"output time 0", `{"profiles": {"x": {"output_time": "0s"}}}`, parseWant{errText: "profiles.x.output_time: 0s: give a positive duration"}},
		{"output entries none", `{"profiles": {"x": {"output_entries": "none", "output_time": "none"}}}`,
			parseWant{name: "x", from: "default", want: func(p *Profile) {
				p.Name, p.Limits = "x", with(p.Limits, L{limits.OutputEntries: 0, limits.OutputTime: time.Duration(0)})
			}}},
		{"new profile from default", `{"profiles": {"long-run": {"timeout": "2h", "cpus": 4}}}`,
			parseWant{name: "long-run", from: "default", want: func(p *Profile) {
				p.Name, p.Limits = "long-run", with(p.Limits, L{limits.Timeout: 2 * time.Hour, limits.CPUQuota: 4})
			}}},
		{"new profile with base", `{"profiles": {"nb2": {"base": "notebook", "memory": "3G"}}}`,
			parseWant{name: "nb2", from: "notebook", want: func(p *Profile) { p.Name, p.Limits = "nb2", with(p.Limits, L{limits.Memory: 3 << 30}) }}},
		{"base is the overridden built-in", `{"profiles": {"tool": {"pids": 70}, "a": {"base": "tool"}}}`,
			parseWant{name: "a", from: "tool", want: func(p *Profile) { p.Name, p.Limits = "a", with(p.Limits, L{limits.PIDs: 70}) }}},
		{"base defined later in name order", `{"profiles": {"a": {"base": "b"}, "b": {"base": "tool", "pids": 30}}}`,
			parseWant{name: "a", from: "tool", want: func(p *Profile) { p.Name, p.Limits = "a", with(p.Limits, L{limits.PIDs: 30}) }}},
		{"allow_tcp with net host", `{"profiles": {"web": {"net": "host", "allow_tcp": [443]}}}`,
			parseWant{name: "web", from: "default", want: func(p *Profile) { p.Name, p.Net, p.AllowTCP = "web", "host", []uint16{443} }}},
		{"limits switched off", `{"profiles": {"free": {"memory": "none", "disk": "none", "cpus": "none", "pids": "none", "timeout": "none"}}}`,
			parseWant{name: "free", from: "default", want: func(p *Profile) {
				p.Name, p.Limits = "free", with(p.Limits, L{limits.Memory: 0, limits.Disk: 0, limits.CPUQuota: 0, limits.PIDs: 0, limits.Timeout: 0})
			}}},
		{"zero sizes and timeout still mean none", `{"profiles": {"free": {"memory": "0", "disk": "0", "timeout": "0s"}}}`,
			parseWant{name: "free", from: "default", want: func(p *Profile) {
				p.Name, p.Limits = "free", with(p.Limits, L{limits.Memory: 0, limits.Disk: 0, limits.Timeout: 0})
			}}},
		{"zero pids refused", `{"profiles": {"x": {"pids": 0}}}`, parseWant{errText: `profiles.x.pids: 0 processes is refused: give a limit such as 512, or write none`}},
		{"zero cpus refused", `{"profiles": {"x": {"cpus": 0}}}`, parseWant{errText: `profiles.x.cpus: 0 CPUs is refused`}},
		{"zero pids refused in an override", `{"profiles": {"tool": {"pids": 0.0}}}`, parseWant{errText: `profiles.tool.pids:`}},
		{"pids above the kernel's", `{"profiles": {"x": {"pids": 99999999999}}}`, parseWant{errText: `profiles.x.pids: 99999999999 is above the kernel's limit of 4194304`}},
		{"pids below the runtime", `{"profiles": {"x": {"pids": 3}}}`, parseWant{errText: `profiles.x.pids: 3 is below 16`}},
		{"other string for pids", `{"profiles": {"x": {"pids": "lots"}}}`, parseWant{errText: `profiles.x.pids: "lots": give a number, or the string "none"`}},
		{"pids as a string number", `{"profiles": {"x": {"pids": "512"}}}`, parseWant{errText: `profiles.x.pids: "512": give a number`}},
		{"none for swap", `{"profiles": {"x": {"swap": "none"}}}`, parseWant{errText: `profiles.x.swap: size "none"`}},

		{"unknown field", `{"profiles": {"x": {"memry": "1G"}}}`, parseWant{errText: "profiles.x.memry: unknown field"}},
		{"unknown top-level field", `{"profile": {}}`, parseWant{errText: "profile: unknown field"}},
		{"bad size", `{"profiles": {"x": {"memory": "2Q"}}}`, parseWant{errText: "profiles.x.memory: size \"2Q\": unknown unit"}},
		{"size not a string", `{"profiles": {"x": {"memory": 1024}}}`, parseWant{errText: "profiles.x.memory: want a size string"}},
		{"negative size", `{"profiles": {"x": {"disk": "-1G"}}}`, parseWant{errText: "profiles.x.disk: size \"-1G\" is not a non-negative number"}},
		{"bad duration", `{"profiles": {"x": {"timeout": "10 minutes"}}}`, parseWant{errText: `profiles.x.timeout: "10 minutes" is not a duration`}},
		{"negative duration", `{"profiles": {"x": {"grace": "-1s"}}}`, parseWant{errText: `profiles.x.grace: "-1s": give a duration such as 5s`}},
		{"bad net", `{"profiles": {"x": {"net": "internet"}}}`, parseWant{errText: `profiles.x.net "internet": choose none, loopback, host or egress`}},
		{"allow_tcp 5432", `{"profiles": {"x": {"net": "host", "allow_tcp": [443, 5432]}}}`, parseWant{errText: "profiles.x.allow_tcp 5432: port 0 or a database port"}},
		{"allow_tcp port 0", `{"profiles": {"x": {"net": "host", "allow_tcp": [0]}}}`, parseWant{errText: "profiles.x.allow_tcp 0"}},
		{"allow_tcp port too large", `{"profiles": {"x": {"net": "host", "allow_tcp": [65536]}}}`, parseWant{errText: "profiles.x.allow_tcp:"}},
		{"allow_tcp without net host", `{"profiles": {"x": {"allow_tcp": [443]}}}`, parseWant{errText: `profiles.x.allow_tcp needs profiles.x.net host (in none mode there is no outside network to reach)`}},
		{"allow_tcp another db port", `{"profiles": {"x": {"net": "host", "db_ports": [5432, 3306], "allow_tcp": [3306]}}}`, parseWant{errText: "allow_tcp 3306"}},
		{"5432 removed from db_ports", `{"profiles": {"default": {"db_ports": [3306]}}}`, parseWant{errText: "profiles.default.db_ports must keep 5432"}},
		{"db_ports emptied", `{"profiles": {"x": {"db_ports": []}}}`, parseWant{errText: "db_ports must keep 5432"}},
		{"cpus out of range", `{"profiles": {"x": {"cpus": 5000}}}`, parseWant{errText: "profiles.x.cpus: 5000 CPUs is above 4096"}},
		{"negative pids", `{"profiles": {"x": {"pids": -1}}}`, parseWant{errText: "profiles.x.pids: -1 is negative"}},
		{"degrade seccomp", `{"profiles": {"x": {"allow_degraded": ["seccomp"]}}}`, parseWant{errText: `profiles.x.allow_degraded "seccomp": only landlock`}},
		{"bad env", `{"profiles": {"x": {"env": ["NOVALUE"]}}}`, parseWant{errText: `profiles.x.env "NOVALUE" is not of the form NAME=VALUE`}},
		{"trailing garbage", `{"profiles": {}} x`, parseWant{errText: "trailing data"}},
		{"trailing brace", `{"profiles": {}}}`, parseWant{errText: "trailing data"}},
		{"trailing bracket", `{"profiles": {}}]`, parseWant{errText: "trailing data"}},
		{"trailing garbage in a field", `{"profiles": {"x": {"cpus": 1}}}`, parseWant{name: "x", from: "default", want: func(p *Profile) { p.Name, p.Limits = "x", with(p.Limits, L{limits.CPUQuota: 1}) }}},
		{"not an object", `[]`, parseWant{errText: "not a JSON object"}},
		{"empty", ``, parseWant{errText: "not a JSON object"}},
		{"profiles not an object", `{"profiles": []}`, parseWant{errText: "profiles: want an object of profile objects"}},
		{"profile not an object", `{"profiles": {"x": 3}}`, parseWant{errText: "profiles: want an object of profile objects"}},
		{"base does not exist", `{"profiles": {"x": {"base": "nosuch"}}}`, parseWant{errText: `profiles.x.base: no profile "nosuch"`}},
		{"base cycle", `{"profiles": {"x": {"base": "y"}, "y": {"base": "x"}}}`, parseWant{errText: `profiles.x.base: no profile "y"`}},
		{"base on a built-in", `{"profiles": {"tool": {"base": "default"}}}`, parseWant{errText: "profiles.tool.base: only a new profile may name a base"}},
		{"base is itself", `{"profiles": {"x": {"base": "x"}}}`, parseWant{errText: `profiles.x.base: no profile "x"`}},
		{"null cpus", `{"profiles": {"x": {"cpus": null}}}`, parseWant{errText: "profiles.x.cpus: null is not a value"}},
		{"null memory", `{"profiles": {"x": {"memory": null}}}`, parseWant{errText: "profiles.x.memory: "}},
		{"base not a string", `{"profiles": {"x": {"base": 1}}}`, parseWant{errText: "profiles.x.base:"}},
		{"upper-case name", `{"profiles": {"Big": {}}}`, parseWant{errText: "profiles.Big: profile names are lower-case"}},
		{"name with a slash", `{"profiles": {"a/b": {}}}`, parseWant{errText: "profiles.a/b: profile names"}},
		{"name with a space", `{"profiles": {"a b": {}}}`, parseWant{errText: "profiles.a b: profile names"}},
		{"name starting with a dot", `{"profiles": {".x": {}}}`, parseWant{errText: "profiles..x: profile names"}},
		{"empty name", `{"profiles": {"": {}}}`, parseWant{errText: "profiles.: profile names"}},
		{"name too long", `{"profiles": {"` + strings.Repeat("a", 65) + `": {}}}`, parseWant{errText: "at most 64"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := Builtins()
			got, err := ParseProfiles([]byte(c.file), base)
			if !reflect.DeepEqual(base, Builtins()) {
				t.Errorf("ParseProfiles(%s) modified its base", c.file)
			}
			if c.errText != "" {
				if err == nil || !strings.Contains(err.Error(), c.errText) {
					t.Fatalf("ParseProfiles(%s) error = %v, want one holding %q", c.file, err, c.errText)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseProfiles(%s) error = %v, want nil", c.file, err)
			}
			want := Builtins()[c.from]
			c.want(&want)
			if !reflect.DeepEqual(got[c.parseWant.name], want) {
				t.Errorf("ParseProfiles(%s)[%s] = %+v, want %+v", c.file, c.parseWant.name, got[c.parseWant.name], want)
			}
			for n, p := range got {
				if err := p.Check(); err != nil {
					t.Errorf("ParseProfiles(%s)[%s].Check() = %v, want nil", c.file, n, err)
				}
			}
		})
	}
}

// TestBuiltinsCheck: every built-in passes Check and carries its own name.
func TestBuiltinsCheck(t *testing.T) {
	for n, p := range Builtins() {
		if err := p.Check(); err != nil {
			t.Errorf("Builtins()[%s].Check() = %v, want nil", n, err)
		}
		if p.Name != n {
			t.Errorf("Builtins()[%s].Name = %q, want %q", n, p.Name, n)
		}
	}
}

func TestLoadProfilesErrors(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.json"
	if err := os.WriteFile(bad, []byte(`{"profiles": {"x": {"memry": "1G"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, dir + "/missing.json"} {
		if _, _, err := LoadProfiles(path); !errors.Is(err, jail.ErrBadSpec) {
			t.Errorf("LoadProfiles(%s) error = %v, want one wrapping jail.ErrBadSpec", path, err)
		}
	}
}

// TestExampleProfiles loads the example file shipped in examples/.
func TestExampleProfiles(t *testing.T) {
	ps, from, err := LoadProfiles("../../examples/profiles.json")
	if err != nil {
		t.Fatalf("LoadProfiles(examples/profiles.json) error = %v, want nil", err)
	}
	if from != "../../examples/profiles.json" {
		t.Errorf("LoadProfiles source = %q, want the file", from)
	}
	b := Builtins()
	overridden, added := 0, 0
	for n, p := range ps {
		bp, builtin := b[n]
		switch {
		case !builtin:
			added++
		case !reflect.DeepEqual(p, bp):
			overridden++
		}
	}
	if overridden < 1 || added < 1 {
		t.Errorf("examples/profiles.json overrides %d built-ins and adds %d profiles, want at least one of each", overridden, added)
	}
}

// TestParseProfilesListsNotShared: the built-ins share list backing arrays;
// overriding one profile's list must leave every other profile as it was.
func TestParseProfilesListsNotShared(t *testing.T) {
	file := `{"profiles": {"default": {"data_dirs": ["in", "out"], "db_ports": [5432]}}}`
	got, err := ParseProfiles([]byte(file), Builtins())
	if err != nil {
		t.Fatalf("ParseProfiles(%s) error = %v, want nil", file, err)
	}
	for n, want := range Builtins() {
		if n == "default" {
			continue
		}
		if !reflect.DeepEqual(got[n], want) {
			t.Errorf("ParseProfiles(%s)[%s] = %+v, want it unchanged: %+v", file, n, got[n], want)
		}
	}
	if want := []string{"in", "out"}; !reflect.DeepEqual(got["default"].DataDirs, want) {
		t.Errorf("ParseProfiles(%s)[default].DataDirs = %v, want %v", file, got["default"].DataDirs, want)
	}
}

// TestEgressBudgetsAreTheEngines: the built-in profiles' egress budgets
// are jail/egress's defaults, the values its doc reasons about.
func TestEgressBudgetsAreTheEngines(t *testing.T) {
	d := egress.DefaultBudgets
	for name, p := range Builtins() {
		got := egress.Budgets{Connections: int(p.Limits.Int(limits.EgressConnections)), Up: p.Limits.Int(limits.EgressUpload),
			Down: p.Limits.Int(limits.EgressDownload), ConnTime: p.Limits.Duration(limits.EgressConnTime)}
		want := egress.Budgets{Connections: d.Connections, Up: d.Up, Down: d.Down, ConnTime: d.ConnTime}
		if got != want {
			t.Errorf("Builtins()[%s]'s egress budgets = %+v, want egress.DefaultBudgets' %+v", name, got, want)
		}
	}
}
