package jail

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestStagesInSchema: the report's JSON Schema enumerates exactly the
// stages a run can report, in the same order.
func TestStagesInSchema(t *testing.T) {
	var s struct {
		Properties struct {
			SetupError struct {
				Properties struct {
					Stage struct {
						Enum []Stage `json:"enum"`
					} `json:"stage"`
				} `json:"properties"`
			} `json:"setup_error"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(report.JSONSchema, &s); err != nil {
		t.Fatalf("report.schema.json: %v", err)
	}
	if got := s.Properties.SetupError.Properties.Stage.Enum; !slices.Equal(got, Stages()) {
		t.Errorf("report.schema.json setup_error.stage enum = %q, want Stages() = %q", got, Stages())
	}
	seen := map[Stage]bool{}
	for _, st := range Stages() {
		if st == "" || seen[st] {
			t.Errorf("Stages() = %q: %q is empty or twice", Stages(), st)
		}
		seen[st] = true
	}
}
