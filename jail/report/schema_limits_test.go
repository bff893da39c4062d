package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
)

var updateSchema = flag.Bool("update-schema", false, "write the table's limits into jail/report/report.schema.json's $defs.limits")

// TestLimitsInSchema: the report's JSON Schema describes the limits
// object the table's rows make (limits.ReportSchema). After a change to
// the table, run it with -update-schema (go test ./jail -run
// TestLimitsInSchema -update-schema), or paste the object it prints over
// $defs.limits of jail/report/report.schema.json.
func TestLimitsInSchema(t *testing.T) {
	var s struct {
		Defs struct {
			Limits any `json:"limits"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(JSONSchema, &s); err != nil {
		t.Fatalf("report.schema.json: %v", err)
	}
	b, err := json.MarshalIndent(limits.ReportSchema(), "    ", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if *updateSchema && !reflect.DeepEqual(s.Defs.Limits, want) {
		writeLimitsSchema(t, b)
		return
	}
	if !reflect.DeepEqual(s.Defs.Limits, want) {
		t.Errorf("report.schema.json's $defs.limits is not the table's; want it to be:\n    %s", b)
	}
}

// writeLimitsSchema puts section (indented for its place) over the
// file's $defs.limits, which starts at `    "limits": {` and ends at the
// first line `    },` after it.
func writeLimitsSchema(t *testing.T, section []byte) {
	const path = "report.schema.json"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(b, []byte("\n    \"limits\": {\n"))
	end := bytes.Index(b[start+1:], []byte("\n    },\n"))
	if start < 0 || end < 0 {
		t.Fatalf("%s: no $defs.limits at four spaces' indent", path)
	}
	out := append(append(append([]byte{}, b[:start+1]...), "    \"limits\": "...), section...)
	out = append(out, b[start+1+end+len("\n    }"):]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote the table's limits into %s", path)
}
