package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// TestOldReports: the reports earlier binaries wrote, one per status
// (python/tests/reports), still validate against the schema, and the Go
// types read back every field they hold: written again, each has the same
// value (the types may add fields, never drop or rename one a reader of
// an old report relies on).
func TestOldReports(t *testing.T) {
	paths, err := filepath.Glob("../../python/tests/reports/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("python/tests/reports: %v, %d reports, want some", err, len(paths))
	}
	schema, err := testutil.CompileReportSchema(JSONSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(b); err != nil {
				t.Errorf("Validate = %v, want nil", err)
			}
			var r Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("json.Unmarshal(Report) = %v", err)
			}
			again, err := r.Encode()
			if err != nil {
				t.Fatal(err)
			}
			var was, is any
			if err := json.Unmarshal(b, &was); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(again, &is); err != nil {
				t.Fatal(err)
			}
			for _, d := range lost("report", was, is) {
				t.Errorf("read and written again: %s", d)
			}
		})
	}
}

// TestSchemaRefusesUnknownFields: a maintained validator refuses a field
// the schema does not name, at the top and in nested objects (the limits
// rows' included), naming where it is.
func TestSchemaRefusesUnknownFields(t *testing.T) {
	schema, err := testutil.CompileReportSchema(JSONSchema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../python/tests/reports/ok.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		add  func(r map[string]any)
		want string // a piece of the validator's message
	}{
		{"top", func(r map[string]any) { r["sandbox"] = "x" }, "sandbox"},
		{"enforced", func(r map[string]any) { r["enforced"].(map[string]any)["egress"] = []any{} }, "egress"},
		{"an output", func(r map[string]any) { r["outputs"].([]any)[0].(map[string]any)["hashed"] = true }, "hashed"},
		{"limits", func(r map[string]any) { r["limits"].(map[string]any)["io_weight"] = 100 }, "io_weight"},
		{"usage", func(r map[string]any) {
			cg := r["enforced"].(map[string]any)["cgroup"].(map[string]any)
			cg["usage"].(map[string]any)["io_bytes"] = 1
		}, "io_bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r map[string]any
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			c.add(r)
			changed, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(changed); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate(ok.json with %s) = %v, want an error naming it", c.want, err)
			}
		})
	}
}

// lost is what of was is not in is: a field missing or of another value
// (is may have fields was has not).
func lost(path string, was, is any) []string {
	switch w := was.(type) {
	case map[string]any:
		i, ok := is.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s = %v, want an object", path, is)}
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if _, ok := i[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s is gone", path, k))
				continue
			}
			out = append(out, lost(path+"."+k, w[k], i[k])...)
		}
		return out
	case []any:
		i, ok := is.([]any)
		if !ok || len(i) != len(w) {
			return []string{fmt.Sprintf("%s = %v, want %d items", path, is, len(w))}
		}
		var out []string
		for n := range w {
			out = append(out, lost(fmt.Sprintf("%s[%d]", path, n), w[n], i[n])...)
		}
		return out
	}
	if !reflect.DeepEqual(was, is) {
		return []string{fmt.Sprintf("%s = %v, want %v", path, is, was)}
	}
	return nil
}
