package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail"
)

// readRepo reads a file of the checkout, relative to its root.
func readRepo(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the text of the README section that starts with heading, up
// to the next heading of the same or a higher level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no section %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	level := strings.Repeat("#", strings.Index(heading, " "))
	for _, l := range strings.SplitAfter(rest, "\n") {
		if strings.HasPrefix(l, "#") && strings.HasPrefix(l, level) && !strings.HasPrefix(l, level+"#") {
			return rest[:strings.Index(rest, l)]
		}
	}
	return rest
}

// TestDocTroubleshootingStages: the README's troubleshooting table has a
// row for every setup stage a run can report (jail.Stages, the closed
// list), in that order, and none for any other.
func TestDocTroubleshootingStages(t *testing.T) {
	table := section(t, readRepo(t, "README.md"), "## Troubleshooting")
	var rows []jail.Stage
	cell := regexp.MustCompile("`([a-z-]+)`")
	for _, l := range strings.Split(table, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		first := strings.SplitN(l[2:], " | ", 2)[0]
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			rows = append(rows, jail.Stage(m[1]))
		}
	}
	stages := jail.Stages()
	for _, s := range stages {
		if !slices.Contains(rows, s) {
			t.Errorf("README's Troubleshooting has no row for stage %q (jail.Stages() lists it)", s)
		}
	}
	for _, s := range rows {
		if !slices.Contains(stages, s) {
			t.Errorf("README's Troubleshooting has a row for stage %q, which is none of jail.Stages() = %q", s, stages)
		}
	}
	if !t.Failed() && !slices.Equal(rows, stages) {
		t.Errorf("README's Troubleshooting rows are in the order %q, want jail.Stages()'s %q", rows, stages)
	}
}

// TestDocManAgreesWithReadme: what the man page says of exit codes and
// statuses, the README's exit code and status tables say too, and the
// README sections and docs the man page points to exist.
func TestDocManAgreesWithReadme(t *testing.T) {
	readme := readRepo(t, "README.md")
	exits := section(t, readme, "## Exit codes and statuses")
	for _, code := range []string{"121", "122", "125", "126 / 127", "128+n"} {
		if !strings.Contains(manExit, strings.SplitN(code, " ", 2)[0]) {
			t.Errorf("man page's EXIT STATUS lacks %s", code)
		}
		if !strings.Contains(exits, "| "+code) {
			t.Errorf("README's exit code table lacks %s", code)
		}
	}
	m := regexp.MustCompile(`status\\fR field \(([a-z_, ]+)\)`).FindStringSubmatch(manExit)
	if m == nil {
		t.Fatal("man page's EXIT STATUS lists no statuses")
	}
	for _, st := range strings.Split(m[1], ", ") {
		if !strings.Contains(exits, "`"+st+"`") {
			t.Errorf("README's status table lacks %q, which the man page lists", st)
		}
	}
	section(t, readme, "## Troubleshooting") // named by the man page
	for _, doc := range []string{"security.md", "deploying.md", "report.md", "performance.md"} {
		if !strings.Contains(manExit, doc) {
			t.Errorf("man page's FILES does not name docs/%s", doc)
		}
		if _, err := os.Stat(filepath.Join("..", "..", "docs", doc)); err != nil {
			t.Errorf("man page names docs/%s: %v", doc, err)
		}
	}
}
