package limits

import (
	"os"
	"strings"
	"testing"
)

// TestREADMETable: the README's limits table is the one the rows make.
// After a change to the table, paste MarkdownTable's output (the test
// prints it) over the README's.
func TestREADMETable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := MarkdownTable(); !strings.Contains(string(b), "\n"+want) {
		t.Errorf("README.md's limits table is not the table's; want it to be:\n%s", want)
	}
}

// TestDeployingFields: docs/deploying.md's table of profile fields has a
// row for every limit's field.
func TestDeployingFields(t *testing.T) {
	b, err := os.ReadFile("../../docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range All {
		if !strings.Contains(string(b), "\n| `"+l.Field+"`") && !strings.Contains(string(b), ", `"+l.Field+"` |") {
			t.Errorf("docs/deploying.md has no row for the profile field %s", l.Field)
		}
	}
}
