package option_test

import (
	"os"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/option"
)

// TestOriginName: a value is named in the words of where it was written,
// for a limit row and an option row alike, over every language; a row
// not given over the profile is the profile's field, and the zero Origin
// (a program's Spec) names flags.
func TestOriginName(t *testing.T) {
	for _, c := range []struct {
		over            option.Where
		memory, ro, env string // given over the profile
		disk, rw        string // the profile's
	}{
		{option.Flag, "--memory", "--ro", "--env", "profiles.z.disk", "profiles.z.read_write"},
		{option.ProfileField, "profiles.z.memory", "profiles.z.read_only", "profiles.z.env", "profiles.z.disk", "profiles.z.read_write"},
		{option.RequestField, "request field limits.memory", "request field read_only", "request field env", "profiles.z.disk", "profiles.z.read_write"},
		{option.Keyword, "keyword memory", "keyword ro", "keyword env", "profiles.z.disk", "profiles.z.read_write"},
	} {
		t.Run(c.over.String(), func(t *testing.T) {
			o := option.FromProfile("z", c.over).With(limits.Memory).With(option.ReadOnly).With(option.Env)
			for _, n := range []struct {
				row  option.Row
				want string
			}{{limits.Memory, c.memory}, {option.ReadOnly, c.ro}, {option.Env, c.env}, {limits.Disk, c.disk}, {option.ReadWrite, c.rw}} {
				if got := o.Name(n.row); got != n.want {
					t.Errorf("FromProfile(z, %s).Name(%s) = %q, want %q", c.over, n.row.RowNames().Field, got, n.want)
				}
			}
		})
	}
	var zero option.Origin
	for _, n := range []struct {
		row  option.Row
		want string
	}{{limits.Disk, "--disk"}, {option.ReadOnly, "--ro"}, {option.TmpRoot, "--tmp-root"}, {option.DBPorts, "db_ports"}, {option.Command, "the command after '--'"}} {
		if got := zero.Name(n.row); got != n.want {
			t.Errorf("Origin{}.Name(%+v) = %q, want %q", n.row.RowNames(), got, n.want)
		}
	}
}

// TestOriginRowsWithoutField: a row no profile holds (the tmp-root, the
// ID) is always named as given, even when no call said it was.
func TestOriginRowsWithoutField(t *testing.T) {
	for _, c := range []struct {
		over option.Where
		want string
	}{{option.Flag, "--tmp-root"}, {option.RequestField, "request field tmp_root"}, {option.Keyword, "keyword tmp_root"}} {
		if got := option.FromProfile("z", c.over).Name(option.TmpRoot); got != c.want {
			t.Errorf("FromProfile(z, %s).Name(tmp_root) = %q, want %q", c.over, got, c.want)
		}
	}
}

// TestOriginNameAt: a list's entries are named by where each was
// written: the profile's first, then those given over it, some as
// another row (an input is a read-only path).
func TestOriginNameAt(t *testing.T) {
	// read_only: 2 of the profile's, 1 input, 2 given as read-only paths.
	o := option.FromProfile("z", option.Flag).Added(option.ReadOnly, 2, option.Inputs).Added(option.ReadOnly, 3, option.ReadOnly)
	for i, want := range []string{"profiles.z.read_only", "profiles.z.read_only", "--input", "--ro", "--ro"} {
		if got := o.NameAt(option.ReadOnly, i); got != want {
			t.Errorf("NameAt(read_only, %d) = %q, want %q", i, got, want)
		}
	}
	if got, want := o.NameAt(option.ReadWrite, 0), "profiles.z.read_write"; got != want {
		t.Errorf("NameAt(read_write, 0) = %q, want %q", got, want)
	}
	r := option.FromProfile("z", option.RequestField).Added(option.ReadOnly, 1, option.Inputs)
	if got, want := r.NameAt(option.ReadOnly, 1), "request field inputs"; got != want {
		t.Errorf("request NameAt(read_only, 1) = %q, want %q", got, want)
	}
	// Added copies: the origin it was called on is unchanged.
	base := option.FromProfile("z", option.Flag)
	_ = base.With(option.ReadOnly)
	if got, want := base.Name(option.ReadOnly), "profiles.z.read_only"; got != want {
		t.Errorf("after With on a copy, Name(read_only) = %q, want %q", got, want)
	}
}

// TestRowNames: every row has a name in every language it can be given
// in, no two rows share one, and a request names a row by its profile
// field where it has one.
func TestRowNames(t *testing.T) {
	var rows []option.Row
	for _, o := range option.All {
		rows = append(rows, o)
	}
	for _, l := range limits.All {
		rows = append(rows, l)
	}
	seen := map[option.Where]map[string]bool{}
	for _, r := range rows {
		n := r.RowNames()
		if n.Flag == "" && n.Field == "" && n.Request == "" {
			t.Errorf("row %+v has no name on the command line, in a profile or in a request", n)
		}
		if n.Field != "" && n.Request != "" && n.Request != n.Field && n.Request != "limits."+n.Keyword {
			t.Errorf("row %+v: a request names it %q, want its profile field %q", n, n.Request, n.Field)
		}
		for _, w := range option.Wheres {
			name := n.In(w)
			if name == "" {
				continue
			}
			if seen[w] == nil {
				seen[w] = map[string]bool{}
			}
			if seen[w][name] {
				t.Errorf("two rows are called %q as a %s", name, w)
			}
			seen[w][name] = true
		}
	}
}

// TestDeployingFields: docs/deploying.md's table of profile fields has a
// row for every option's field, as it has for every limit's.
func TestDeployingFields(t *testing.T) {
	b, err := os.ReadFile("../../docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range option.All {
		if o.Field != "" && !strings.Contains(string(b), "\n| `"+o.Field+"`") && !strings.Contains(string(b), ", `"+o.Field+"` |") {
			t.Errorf("docs/deploying.md has no row for the profile field %s", o.Field)
		}
	}
}
