package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
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

// setupStages are the stages a report's setup_error can name, read from
// the code that sends them: the init's steps and failures, the
// supervisor's and the plan's.
func setupStages(t *testing.T) []string {
	t.Helper()
	found := map[string]bool{}
	pats := []*regexp.Regexp{
		regexp.MustCompile(`\{"([a-z-]+)", func\(\)`),          // the init's setup steps
		regexp.MustCompile(`step\{"([a-z-]+)"`),                // a step run on its own
		regexp.MustCompile(`\.fail\("([a-z-]+)"`),              // the init's failures
		regexp.MustCompile(`failAt\("([a-z-]+)"`),              // the supervisor's
		regexp.MustCompile(`[sS]tage(?::| =| :=) "([a-z-]+)"`), // a stage named in a value
	}
	files, _ := filepath.Glob("../../jail/*.go")
	more, _ := filepath.Glob("../../jail/internal/initproc/*.go")
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pats {
			for _, m := range p.FindAllStringSubmatch(string(b), -1) {
				found[m[1]] = true
			}
		}
	}
	var out []string
	for s := range found {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// TestDocTroubleshootingStages: the README's troubleshooting table has a
// row for every setup stage the code can report, and none for a stage it
// cannot.
func TestDocTroubleshootingStages(t *testing.T) {
	stages := setupStages(t)
	if len(stages) < 15 {
		t.Fatalf("setupStages() = %q: fewer than the 15 or more the code has; are the patterns stale?", stages)
	}
	t.Logf("stages in the code: %q", stages)
	table := section(t, readRepo(t, "README.md"), "## Troubleshooting")
	rows := map[string]bool{}
	cell := regexp.MustCompile("`([a-z-]+)`")
	for _, l := range strings.Split(table, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		first := strings.SplitN(l[2:], " | ", 2)[0]
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			rows[m[1]] = true
		}
	}
	for _, s := range stages {
		if !rows[s] {
			t.Errorf("README's Troubleshooting has no row for stage %q (the code reports it)", s)
		}
		delete(rows, s)
	}
	for s := range rows {
		t.Errorf("README's Troubleshooting has a row for stage %q, which the code never reports (stages: %q)", s, stages)
	}
}

// TestDocManAgreesWithReadme: what the man page says of exit codes and
// statuses, the README's exit code and status tables say too, and the
// README sections and docs the man page points to exist.
func TestDocManAgreesWithReadme(t *testing.T) {
	readme := readRepo(t, "README.md")
	exits := section(t, readme, "## Exit codes and statuses")
	for _, code := range []string{"122", "125", "126 / 127", "128+n"} {
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
