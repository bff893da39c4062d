package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/profile"
)

// profilesCmd is `scidex-jail profiles`: the effective profiles, written
// as a profiles file (the same field names and units), so that its output
// can be saved as /etc/scidex-jail/profiles.json and edited. Where they
// came from goes to stderr. With --schema it prints what a limit and a run
// option may be instead (schema), which the Python package validates from.
type profilesCmd struct {
	configFlag
	Builtin bool `name:"builtin" help:"Print the built-in profiles only, ignoring any profiles file."`
	Schema  bool `name:"schema" help:"Print every limit and run option as JSON (kind, none and zero rules, bounds, flag, profile field, units, messages), versioned, instead of the profiles."`
}

func (c *profilesCmd) Run() error {
	if c.Schema {
		return writeSchema()
	}
	ps, from := profile.Builtins(), ""
	if !c.Builtin {
		var err error
		if ps, from, err = profile.LoadProfiles(c.Config); err != nil {
			return err
		}
	}
	out, err := profile.ProfilesFile(ps)
	if err != nil {
		return err
	}
	source := "built-in"
	if from != "" {
		source = "built-in, overridden by " + from
	}
	fmt.Fprintf(os.Stderr, "scidex-jail: profiles: %s\n", source)
	_, err = os.Stdout.Write(out)
	return err
}

// netChoices are the network mode's words: the rows of jail/netmode's
// table (the one option row whose type is a choice).
func netChoices(*option.Option) []string {
	var modes []string
	for _, n := range netmode.Names() {
		modes = append(modes, string(n))
	}
	return modes
}

// writeSchema prints the limits' table and the run options' as JSON.
func writeSchema() error {
	out, err := json.MarshalIndent(struct {
		Schema  string               `json:"schema"`
		Version int                  `json:"version"`
		Limits  []limits.LimitSchema `json:"limits"`
		Options []option.Schema      `json:"options"`
	}{
		Schema: "scidex-jail limits and run options", Version: limits.SchemaVersion, Limits: limits.Schema(),
		Options: option.Schemas(netChoices),
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("bug: encode the schema: %w", err)
	}
	_, err = os.Stdout.Write(append(out, '\n'))
	return err
}
