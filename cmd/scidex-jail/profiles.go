package main

import (
	"encoding/json"
	"os"

	"github.com/scidex/scidex-jail/jail"
)

// profilesCmd is `scidex-jail profiles`: the effective profiles, as JSON in
// the profiles file's own field names and units.
type profilesCmd struct {
	Config string `name:"config" placeholder:"FILE" help:"Profiles file (JSON). Default: /etc/scidex-jail/profiles.json when it exists."`
}

func (c *profilesCmd) Run() error {
	ps, from, err := jail.LoadProfiles(c.Config)
	if err != nil {
		return err
	}
	out := struct {
		Source   string             `json:"source"`
		Profiles []jail.ProfileView `json:"profiles"`
	}{Source: "built-in"}
	if from != "" {
		out.Source = "built-in, overridden by " + from
	}
	for _, n := range jail.Names(ps) {
		out.Profiles = append(out.Profiles, ps[n].View())
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
