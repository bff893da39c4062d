package main

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail"
)

// profilesCmd is `scidex-jail profiles`: the effective profiles, written
// as a profiles file (the same field names and units), so that its output
// can be saved as /etc/scidex-jail/profiles.json and edited. Where they
// came from goes to stderr.
type profilesCmd struct {
	configFlag
	Builtin bool `name:"builtin" help:"Print the built-in profiles only, ignoring any profiles file."`
}

func (c *profilesCmd) Run() error {
	ps, from := jail.Builtins(), ""
	if !c.Builtin {
		var err error
		if ps, from, err = jail.LoadProfiles(c.Config); err != nil {
			return err
		}
	}
	out, err := jail.ProfilesFile(ps)
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
