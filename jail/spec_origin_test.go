package jail

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/option"
)

// TestValidateNamesByOrigin: Validate names each refused value as its
// Origin says it was written, over every language: a profile's read-only
// path by the profile's field whatever the language of the values given
// over it, a path given over it in that language, an input as an input.
func TestValidateNamesByOrigin(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	for _, c := range []struct {
		over              option.Where
		profiles, given   string // the profile's path, one given over it
		input, tmp, envKV string
	}{
		{option.Flag, "profiles.z.read_only", "--ro", "--input", "--tmp-root", "--env"},
		{option.RequestField, "profiles.z.read_only", "request field read_only", "request field inputs", "request field tmp_root", "request field env"},
		{option.Keyword, "profiles.z.read_only", "keyword ro", "keyword inputs", "keyword tmp_root", "keyword env"},
	} {
		t.Run(c.over.String(), func(t *testing.T) {
			from := option.FromProfile("z", c.over)
			for _, v := range []struct {
				spec func(*Spec)
				want string
			}{
				// read_only: the profile's one entry, then what is added.
				{func(s *Spec) { s.ReadOnly = []string{missing} }, c.profiles + ` "` + missing + `" does not exist`},
				{func(s *Spec) {
					s.ReadOnly = []string{t.TempDir(), missing}
					s.From = from.Added(option.ReadOnly, 1, option.ReadOnly)
				}, c.given + ` "` + missing + `" does not exist`},
				{func(s *Spec) {
					s.ReadOnly = []string{t.TempDir(), missing}
					s.From = from.Added(option.ReadOnly, 1, option.Inputs)
				}, c.input + ` "` + missing + `" does not exist`},
				{func(s *Spec) { s.TmpRoot = "tmp" }, c.tmp + ` "tmp" must be an absolute path`},
				{func(s *Spec) { s.Env = []string{"NOVALUE"}; s.From = from.With(option.Env) }, c.envKV + ` "NOVALUE" is not of the form NAME=VALUE`},
			} {
				s := testSpec()
				s.TmpRoot, s.Root = t.TempDir(), t.TempDir()
				s.From = from
				v.spec(s)
				_, err := s.Validate()
				if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), v.want) {
					t.Errorf("Validate() = %v, want ErrBadSpec naming %s", err, v.want)
				}
			}
		})
	}
}
