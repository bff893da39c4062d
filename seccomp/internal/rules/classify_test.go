package rules

import (
	"slices"
	"testing"
)

// TestEverySyscallClassified, which holds the table to x/sys/unix, is in
// the seccomp package: it runs the go command and reads the module cache,
// which the unprivileged user of make unit cannot.

// TestClassesDisjoint: a name is in one class. Allowed names may have
// conditional rules, never a rule that denies them whole; a name with
// conditional rules is Allowed (otherwise its other calls would go by
// unclassified); NotImplemented names have no rule.
func TestClassesDisjoint(t *testing.T) {
	allowed := map[string]bool{}
	for _, n := range Allowed {
		if allowed[n] {
			t.Errorf("Allowed lists %s twice", n)
		}
		allowed[n] = true
	}
	notImpl := map[string]bool{}
	for _, n := range NotImplemented {
		if allowed[n] || notImpl[n] {
			t.Errorf("NotImplemented lists %s, which is Allowed or listed twice", n)
		}
		notImpl[n] = true
	}
	for _, name := range Names {
		for _, net := range Nets {
			for _, g := range mustGroupsOf(t, name, net) {
				for _, r := range g.Rules {
					switch {
					case notImpl[r.Syscall]:
						t.Errorf("%s/%s: group %q has a rule for %s, which NotImplemented lists", name, net, g.Summary, r.Syscall)
					case len(r.Conds) == 0 && allowed[r.Syscall]:
						t.Errorf("%s/%s: group %q denies %s whole, which Allowed lists", name, net, g.Summary, r.Syscall)
					case len(r.Conds) > 0 && !allowed[r.Syscall]:
						t.Errorf("%s/%s: group %q has a conditional rule for %s, which Allowed does not list", name, net, g.Summary, r.Syscall)
					}
				}
			}
		}
	}
}

// TestUnclassified is Unclassified on a known list.
func TestUnclassified(t *testing.T) {
	got, err := Unclassified([]string{"read", "zz_new", "open_tree_attr", "tuxcall", "aa_new", "socket"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"aa_new", "zz_new"}; !slices.Equal(got, want) {
		t.Errorf("Unclassified(...) = %v, want %v", got, want)
	}
}

func mustGroupsOf(t *testing.T, name, net string) []Group {
	t.Helper()
	g, err := Groups(name, net)
	if err != nil {
		t.Fatalf("Groups(%s, %s) = %v", name, net, err)
	}
	return g
}
