package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// parseQuiet parses args as main does, with kong's output discarded.
func parseQuiet(t *testing.T, args ...string) (*cli, error) {
	t.Helper()
	var c cli
	_, err := parse(&c, args, kong.Writers(io.Discard, io.Discard))
	return &c, err
}

// TestExitStatus: help is a success, a command's own status passes
// through, and every other error is printed and ends in 125.
func TestExitStatus(t *testing.T) {
	_, help := parseQuiet(t, "run", "--help")
	_, missing := parseQuiet(t, "run")
	cases := []struct {
		name    string
		err     error
		code    int
		printed string
	}{
		{"success", nil, 0, ""},
		{"help without --id", help, 0, ""},
		{"status of a run", exitError{3}, 3, ""},
		{"check not in full", exitError{1}, 1, ""},
		{"missing --id", missing, exitSetup, "scidex-jail: missing flags: --id=STRING\n"},
		{"bad spec", bad("--id is empty"), exitSetup, "scidex-jail: invalid run specification: --id is empty\n"},
	}
	for _, tc := range cases {
		var b strings.Builder
		if got := exitStatus(&b, tc.err); got != tc.code || b.String() != tc.printed {
			t.Errorf("%s: exitStatus(%v) = %d, printed %q; want %d, %q", tc.name, tc.err, got, b.String(), tc.code, tc.printed)
		}
	}
	if !errors.Is(help, errHelpShown) {
		t.Errorf("parse(run --help) = %v, want errHelpShown", help)
	}
}

func TestCutDash(t *testing.T) {
	cases := []struct {
		args, ours, target []string
	}{
		{[]string{"run", "--id", "x"}, []string{"run", "--id", "x"}, nil},
		{[]string{"run", "--", "ls", "--", "-l"}, []string{"run"}, []string{"ls", "--", "-l"}},
		{[]string{"run", "--id", "x", "--"}, []string{"run", "--id", "x"}, []string{}},
	}
	for _, tc := range cases {
		ours, target := cutDash(tc.args)
		if !slices.Equal(ours, tc.ours) || !slices.Equal(target, tc.target) || (tc.target != nil) != (target != nil) {
			t.Errorf("cutDash(%q) = %q, %q; want %q, %q", tc.args, ours, target, tc.ours, tc.target)
		}
	}
}
