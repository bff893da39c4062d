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
