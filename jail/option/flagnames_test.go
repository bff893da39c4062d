package option_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// flagName is a command-line flag in a string: --ro, --tmp-root. A
// string that is "--" alone is the start of a flag's name being built.
var flagName = regexp.MustCompile(`(^|[^-\w])--([a-z][a-z0-9-]*)`)

// foreignFlags are other programs' flags that messages quote in commands
// for the user to type (setpriv's, docker's): not this jail's.
var foreignFlags = []string{"--reuid", "--regid", "--clear-groups", "--security-opt"}

// namerFiles write a flag's dashes: the one command-line namer.
var namerFiles = []string{"option/origin.go"}

// TestNoFlagNamesUnderJail: no string literal under jail/ names a
// command-line flag: the library speaks the words of where a value was
// written (Origin), and only its namer writes a flag's dashes. A message
// that needs a flag's name asks an Origin for it.
func TestNoFlagNamesUnderJail(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || slices.Contains(namerFiles, rel) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if s == "--" {
				t.Errorf("%s: a flag's name is built from \"--\": name the option through an option.Origin", fset.Position(lit.Pos()))
			}
			for _, m := range flagName.FindAllStringSubmatch(s, -1) {
				if flag := "--" + m[2]; !slices.Contains(foreignFlags, flag) {
					t.Errorf("%s: string %s names the flag %q: name the option through an option.Origin", fset.Position(lit.Pos()), lit.Value, flag)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
