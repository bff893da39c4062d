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

// TestCommandGrammar: the grammar built for one command holds that command
// exactly as the whole cli does (its flags, their help and defaults, its
// arguments), and help, hidden commands and mistakes get the whole cli.
func TestCommandGrammar(t *testing.T) {
	var whole cli
	full, err := kong.New(&whole, kong.Name("scidex-jail"))
	if err != nil {
		t.Fatalf("kong.New(cli) = %v", err)
	}
	describe := func(n *kong.Node) []string {
		out := []string{n.Name, n.Help}
		for _, f := range n.Flags {
			out = append(out, f.Name+"|"+string(f.Short)+"|"+f.Help+"|"+f.Default+"|"+f.FormatPlaceHolder()+"|"+string(f.Tag.Sep))
		}
		for _, p := range n.Positional {
			out = append(out, p.Name+"|"+p.Help)
		}
		return out
	}
	for _, cmd := range full.Model.Children {
		var c cli
		g, only := commandGrammar(&c, []string{cmd.Name, "--help"})
		if cmd.Hidden {
			if g != any(&c) || only != nil {
				t.Errorf("commandGrammar(%s) = %T, %d options; want the whole cli for a hidden command", cmd.Name, g, len(only))
			}
			continue
		}
		p, err := kong.New(g, append(only, kong.Name("scidex-jail"))...)
		if err != nil {
			t.Fatalf("kong.New(commandGrammar(%s)) = %v", cmd.Name, err)
		}
		if n := len(p.Model.Children); n != 1 {
			t.Fatalf("commandGrammar(%s) has %d commands, want 1", cmd.Name, n)
		}
		if got, want := describe(p.Model.Children[0]), describe(cmd); !slices.Equal(got, want) {
			t.Errorf("commandGrammar(%s) =\n%q\nwant as in the whole cli:\n%q", cmd.Name, got, want)
		}
	}
	for _, args := range [][]string{nil, {"--help"}, {"-h", "run"}, {"Run"}, {"bogus"}} {
		var c cli
		if g, only := commandGrammar(&c, args); g != any(&c) || only != nil {
			t.Errorf("commandGrammar(%q) = %T, %d options; want the whole cli", args, g, len(only))
		}
	}
}
