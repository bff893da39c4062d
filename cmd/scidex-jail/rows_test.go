package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/option"
)

// commandOnly are run's flags that are no option of the run itself but of
// this process: where its summary goes, a server to hand the run to, the
// descriptor that says a cancel is reported.
var commandOnly = []string{"help", "summary", "server", "ready-fd"}

// runFlags is run's flags in kong's model, by name.
func runFlags(t *testing.T) map[string]*kong.Flag {
	t.Helper()
	var c cli
	p, err := newParser(&c, []string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]*kong.Flag{}
	for _, n := range p.k.Model.Children {
		if n.Name != "run" {
			continue
		}
		for _, f := range n.Flags {
			flags[f.Name] = f
		}
	}
	if len(flags) == 0 {
		t.Fatal("no run command in the model")
	}
	return flags
}

// TestRunFlagsAreRows: every flag of run is a row of jail/option's table or
// of jail/limits', or one of the command's own; every row with a flag is
// a flag of run, with the row's help and placeholder (the network's, with
// jail/netmode's).
func TestRunFlagsAreRows(t *testing.T) {
	flags := runFlags(t)
	for name := range flags {
		if option.ByFlag(name) == nil && limits.ByFlag(name) == nil && !slices.Contains(commandOnly, name) {
			t.Errorf("run's flag --%s is no row of jail/option or jail/limits: add its row", name)
		}
	}
	for _, o := range option.All {
		if o.Flag == "" {
			continue
		}
		f := flags[o.Flag]
		if f == nil {
			t.Errorf("row %s has the flag --%s, which run does not have", o.Request, o.Flag)
			continue
		}
		if o == option.Net || o == option.AllowTCP {
			// Their help is jail/netmode's table's (netHelp): the modes.
			continue
		}
		if f.Help != o.Help || f.PlaceHolder != o.Placeholder {
			t.Errorf("run --%s: help %q, placeholder %q; want the row's %q, %q", o.Flag, f.Help, f.PlaceHolder, o.Help, o.Placeholder)
		}
	}
}

// TestProfilesSchemaOptions: `profiles --schema` lists every option row
// with its names in each language, as the Python package reads them.
func TestProfilesSchemaOptions(t *testing.T) {
	r := runJail(t, runOpts{}, "profiles", "--schema")
	var got struct {
		Options []option.Schema      `json:"options"`
		Limits  []limits.LimitSchema `json:"limits"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("profiles --schema = exit %d, %q, %v; want JSON", r.code, r.stdout, err)
	}
	if len(got.Options) != len(option.All) {
		t.Fatalf("profiles --schema has %d options, want the %d rows", len(got.Options), len(option.All))
	}
	for i, o := range option.All {
		s := got.Options[i]
		if s.RequestField != o.Request || s.ProfileField != o.Field || s.Keyword != o.Keyword || (o.Flag != "") != (s.Flag == "--"+o.Flag) {
			t.Errorf("profiles --schema option %d = %+v, want the row %+v", i, s, o.Names)
		}
	}
	if net := got.Options[slices.Index(option.All, option.Net)]; !slices.Equal(net.Choices, []string{"none", "loopback", "host", "egress"}) {
		t.Errorf("profiles --schema net choices = %q, want none, loopback, host, egress", net.Choices)
	}
	for i, l := range limits.All {
		if s := got.Limits[i]; s.RequestField != "limits."+l.Name || s.Keyword != l.Name {
			t.Errorf("profiles --schema limit %s: request field %q, keyword %q; want limits.%s, %s", l.Name, s.RequestField, s.Keyword, l.Name, l.Name)
		}
	}
}

// readmeFlag is a flag in a row of the README's table of run's flags.
var readmeFlag = regexp.MustCompile("`--([a-z][a-z-]*)")

// TestREADMERunFlags: the README's table of run's flags names every row
// that has a flag, and no flag that is not one of run's.
func TestREADMERunFlags(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| flag | meaning |\n")
	if !ok {
		t.Fatal("README.md has no table of run's flags (| flag | meaning |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	documented := map[string]bool{}
	for _, m := range readmeFlag.FindAllStringSubmatch(table, -1) {
		documented[m[1]] = true
	}
	flags := runFlags(t)
	for name := range documented {
		if flags[name] == nil {
			t.Errorf("README.md's table of run's flags names --%s, which run does not have", name)
		}
	}
	for _, o := range option.All {
		if o.Flag != "" && !documented[o.Flag] {
			t.Errorf("README.md's table of run's flags lacks --%s (the row %s): add it", o.Flag, o.Request)
		}
	}
	for _, l := range limits.All {
		if !documented[l.Flag] {
			t.Errorf("README.md's table of run's flags lacks --%s (the limit %s): add it", l.Flag, l.Name)
		}
	}
}
