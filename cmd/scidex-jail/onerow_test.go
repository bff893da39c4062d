package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/report"
)

// withRow adds l to the table for the test's length.
func withRow(t *testing.T, l *limits.Limit) {
	all := limits.All
	limits.All = append(slices.Clip(all), l)
	t.Cleanup(func() { limits.All = all })
}

// TestHypotheticalRow: a new limit is one row of jail/limits' table (and,
// for a cgroup limit, one controller file of cgroupfs, which cgroupfs'
// own TestHypotheticalController shows): with the row alone, the flag
// (with its help and its refusals), the profile field (read and printed),
// the report's field, the schema the Python package reads and the
// report's JSON Schema all have it, and a Spec stores it.
func TestHypotheticalRow(t *testing.T) {
	ioWeight := &limits.Limit{
		Name: "io_weight", Kind: limits.Count, None: true, Zero: limits.ZeroRefused,
		Flag: "io-weight", Field: "io_weight", Report: "limits.io_weight", ReportOptional: true,
		Unit: "shares", Give: "a weight such as 100", Off: "the kernel's default", Noun: "weight",
		Placeholder: "N", Help: "I/O weight of the run (a row of the test only).",
	}
	withRow(t, ioWeight)

	var help bytes.Buffer
	var c cli
	if _, err := parse(&c, []string{"run", "--help"}, kong.Writers(&help, &help)); !errors.Is(err, errHelpShown) || !strings.Contains(help.String(), "--io-weight=N") {
		t.Errorf("run --help = %v, want the row's flag --io-weight=N in:\n%s", err, help.String())
	}
	cl, err := parseQuiet(t, "run", "--id", "x", "--io-weight", "100")
	if err != nil {
		t.Fatalf("parse(--io-weight 100) = %v", err)
	}
	s := resolved(t, cl, t.TempDir())
	if got := s.Limits.Int(ioWeight); got != 100 {
		t.Errorf("--io-weight 100: Spec.Limits = %d, want 100", got)
	}
	if _, err := parseQuiet(t, "run", "--id", "x", "--io-weight", "0"); err == nil || !strings.Contains(err.Error(), "--io-weight: 0 shares is refused") {
		t.Errorf("parse(--io-weight 0) = %v, want the row's refusal", err)
	}

	ps, err := profile.ParseProfiles([]byte(`{"profiles": {"x": {"io_weight": 7}}}`), profile.Builtins())
	if err != nil || ps["x"].Limits.Int(ioWeight) != 7 {
		t.Fatalf("ParseProfiles(io_weight 7) = %v, %v; want the field read", ps["x"].Limits.Int(ioWeight), err)
	}
	if b, err := json.Marshal(ps["x"].View()); err != nil || !strings.Contains(string(b), `"io_weight":7`) {
		t.Errorf("the profile's view = %s, %v; want io_weight 7", b, err)
	}

	b, err := json.Marshal(report.LimitsReport{Profile: "x", Values: s.Limits})
	if err != nil || !strings.Contains(string(b), `"io_weight":100`) {
		t.Errorf("the report's limits = %s, %v; want io_weight 100", b, err)
	}
	var back report.LimitsReport
	if err := json.Unmarshal(b, &back); err != nil || back.Values.Int(ioWeight) != 100 {
		t.Errorf("the report's limits read back: io_weight %d, %v; want 100", back.Values.Int(ioWeight), err)
	}

	if row := schemaRow(t, "io_weight"); row == nil || row.Flag != "--io-weight" || row.ReportField != "limits.io_weight" {
		t.Errorf("profiles --schema row io_weight = %+v, want its flag and report field", row)
	}
	def := limits.ReportSchema()
	if _, ok := def["properties"].(map[string]any)["io_weight"]; !ok || slices.Contains(def["required"].([]any), any("io_weight")) {
		t.Errorf("the report's JSON Schema limits = %v, want io_weight, not required (added within the version)", def)
	}
}

func schemaRow(t *testing.T, name string) *limits.LimitSchema {
	t.Helper()
	for _, r := range limits.Schema() {
		if r.Name == name {
			return &r
		}
	}
	return nil
}
