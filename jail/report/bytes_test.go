package report

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"testing"
)

var updateBytes = flag.Bool("update-bytes", false, "write testdata/full.json from the report's types (after a deliberate change of the report)")

// TestReportBytes: a report with every field set (full) encodes to the
// bytes of testdata/full.json, written by the types as they were: a change
// of the report's Go types (where a type is declared, a JSON tag, a field's
// order) changes no byte a reader sees. A deliberate change of the report
// (a new field) rewrites the file with -update-bytes, and the diff shows it.
func TestReportBytes(t *testing.T) {
	r := full(reflect.TypeFor[Report](), every).Interface().(Report)
	got, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	const path = "testdata/full.json"
	if *updateBytes {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Encode(a full report) differs from %s (run with -update-bytes to see how, if the change is meant):\n%s", path, got)
	}
}
