package jail

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
)

// TestLimitsInSchema: the report's JSON Schema describes the limits
// object the table's rows make (limits.ReportSchema). After a change to
// the table, paste the object the test prints over $defs.limits of
// jail/schema/report.schema.json.
func TestLimitsInSchema(t *testing.T) {
	var s struct {
		Defs struct {
			Limits any `json:"limits"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(ReportJSONSchema, &s); err != nil {
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
	if !reflect.DeepEqual(s.Defs.Limits, want) {
		t.Errorf("report.schema.json's $defs.limits is not the table's; want it to be:\n    %s", b)
	}
}
