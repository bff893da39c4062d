package netmode

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/seccomp"
)

// TestRowLayers: the rows give the network's promises the layers the
// promise table gave each mode before the modes were rows (and that
// jail/promise's tests name for them).
func TestRowLayers(t *testing.T) {
	L := func(l ...promise.Layer) []promise.Layer { return l }
	want := map[Name]map[promise.Promise][]promise.Layer{
		"none": {
			promise.PromiseAbstractSockets: L(promise.LayerNetNS, promise.LayerLandlockScope),
			promise.PromiseNoPostgres:      L(promise.LayerNetNS, promise.LayerSeccomp),
			promise.PromiseNetwork:         L(promise.LayerNetNS, promise.LayerSeccomp),
		},
		"loopback": {
			promise.PromiseAbstractSockets: L(promise.LayerNetNS, promise.LayerLandlockScope),
			promise.PromiseNoPostgres:      L(promise.LayerNetNS),
			promise.PromiseNetwork:         L(promise.LayerNetNS),
		},
		"host": {
			promise.PromiseAbstractSockets: L(promise.LayerLandlockScope),
			promise.PromiseNoPostgres:      L(promise.LayerLandlockTCP),
			promise.PromiseNetwork:         L(promise.LayerLandlockTCP),
		},
		// As loopback: the namespace has no route out, and the
		// supervisor's sockets in it are the only way.
		"egress": {
			promise.PromiseAbstractSockets: L(promise.LayerNetNS, promise.LayerLandlockScope),
			promise.PromiseNoPostgres:      L(promise.LayerNetNS),
			promise.PromiseNetwork:         L(promise.LayerNetNS),
		},
	}
	for name, w := range want {
		m, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%s) = %v", name, err)
		}
		if !maps.EqualFunc(m.Layers, w, slices.Equal) {
			t.Errorf("Lookup(%s).Layers = %v, want %v", name, m.Layers, w)
		}
	}
}

// TestRows: every row is whole: a name of its own, texts for the help,
// the promise and the docs, a seccomp policy the filter has, and layers
// for exactly the promises the network decides.
func TestRows(t *testing.T) {
	seen := map[Name]bool{}
	for _, m := range All {
		if m.Name == "" || seen[m.Name] || strings.ContainsAny(string(m.Name), " ,\"") {
			t.Errorf("row %q: want a plain name of its own", m.Name)
		}
		seen[m.Name] = true
		if m.Help == "" || m.Means == "" || m.Doc == "" {
			t.Errorf("row %s: Help %q, Means %q, Doc %q, want all three", m.Name, m.Help, m.Means, m.Doc)
		}
		if _, err := seccomp.Lookup(seccomp.Policy{Name: "default", Net: m.Seccomp}); err != nil {
			t.Errorf("row %s: seccomp.Lookup(default, %q) = %v, want a program", m.Name, m.Seccomp, err)
		}
		got := slices.Sorted(maps.Keys(m.Layers))
		if want := slices.Sorted(slices.Values(promise.NetPromises())); !slices.Equal(got, want) {
			t.Errorf("row %s gives layers for %q, want exactly %q (promise.NetPromises)", m.Name, got, want)
		}
		for p, ls := range m.Layers {
			if len(ls) == 0 {
				t.Errorf("row %s: no layer for %s, want one at least (a promise no layer holds refuses every run)", m.Name, p)
			}
		}
		for _, kv := range m.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				t.Errorf("row %s: Env %q is not NAME=VALUE", m.Name, kv)
			}
		}
	}
	if _, err := Lookup(Default); err != nil {
		t.Errorf("Lookup(Default %q) = %v, want its row", Default, err)
	}
}

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		name Name
		want string // "" = found
	}{
		{"none", ""}, {"loopback", ""}, {"host", ""}, {"egress", ""},
		{"internet", `"internet": choose none, loopback, host or egress`},
		{"", `"": choose none, loopback, host or egress`},
		{"Host", `"Host": choose none, loopback, host or egress`},
	} {
		m, err := Lookup(c.name)
		var ue *UnknownError
		switch {
		case c.want == "" && (err != nil || m.Name != c.name):
			t.Errorf("Lookup(%q) = %q, %v; want its row", c.name, m.Name, err)
		case c.want != "" && (!errors.As(err, &ue) || err.Error() != c.want):
			t.Errorf("Lookup(%q) = %v, want an *UnknownError %q", c.name, err, c.want)
		}
	}
}

func TestCheckPorts(t *testing.T) {
	for _, c := range []struct {
		mode  Name
		ports []uint16
		want  string // "" = allowed
	}{
		{"host", []uint16{443}, ""},
		{"none", nil, ""},
		{"loopback", []uint16{}, ""},
		{"none", []uint16{443}, "needs --net host (in none mode there is no outside network to reach)"},
		{"loopback", []uint16{80}, "needs --net host (in loopback mode there is no outside network to reach)"},
	} {
		m, _ := Lookup(c.mode)
		pe := m.CheckPorts(c.ports)
		switch {
		case c.want == "" && pe != nil:
			t.Errorf("Lookup(%s).CheckPorts(%v) = %v, want nil", c.mode, c.ports, pe)
		case c.want != "" && (pe == nil || pe.Needs("--net") != c.want):
			t.Errorf("Lookup(%s).CheckPorts(%v).Needs(--net) = %v, want %q", c.mode, c.ports, pe, c.want)
		}
	}
}

func TestHelp(t *testing.T) {
	want := "Network: none (no network), loopback (lo only, e.g. for notebook kernels), host (the host's network; outbound TCP only to the allowed TCP ports; UDP is not restricted), egress (only the allowed hosts, by name, through the supervisor's DNS stub and proxy)."
	if got := Help(); got != want {
		t.Errorf("Help() = %q, want %q", got, want)
	}
	for _, c := range []struct {
		names []Name
		want  string
	}{{nil, ""}, {[]Name{"a"}, "a"}, {[]Name{"a", "b"}, "a or b"}, {[]Name{"a", "b", "c"}, "a, b or c"}} {
		if got := Choices(c.names); got != c.want {
			t.Errorf("Choices(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}

// TestDocsTable: docs/security.md's table of network modes is the one the
// rows make. After a change to a row, paste MarkdownTable's output (the
// test prints it) over the document's.
func TestDocsTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := MarkdownTable(); !strings.Contains(string(b), "\n"+want) {
		t.Errorf("docs/security.md's table of network modes is not the rows'; want it to be:\n%s", want)
	}
}

// TestREADMEFlag: the README's row for --net names every mode, in the
// table's order.
func TestREADMEFlag(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(All))
	for i, m := range All {
		names[i] = string(m.Name)
	}
	if want := "| `--net " + strings.Join(names, `\|`) + "`"; !strings.Contains(string(b), "\n"+want) {
		t.Errorf("README.md has no flag row starting %q: write the table's modes there", want)
	}
}

// TestReportSchemaModes: the report's JSON Schema takes every mode (and
// "" of a report that failed before its mode was known) as enforced.net,
// and nothing else: a new row fails here until the schema has it.
func TestReportSchemaModes(t *testing.T) {
	b, err := os.ReadFile("../report/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	want := []string{""}
	for _, n := range Names() {
		want = append(want, string(n))
	}
	if got := s.Defs["enforced"].Properties["net"].Enum; !slices.Equal(got, want) {
		t.Errorf("report.schema.json's enforced.net = %q, want %q (the rows' names)", got, want)
	}
}
