package main

import (
	"strings"

	"github.com/scidex/scidex-jail/jail/profile"
)

// configFlag names the profiles file, for every command that reads it.
type configFlag struct {
	Config string `name:"config" placeholder:"FILE" help:"Profiles file (JSON). Default: /etc/scidex-jail/profiles.json when it exists."`
}

// jailFlags are the flags run and check share: which profile, and where
// and as whom a run would go. Their defaults are jail.DefaultTmpRoot and
// jail.DefaultHostUID (a struct tag cannot name a constant; a test holds
// them equal).
type jailFlags struct {
	Profile string `name:"profile" short:"p" default:"default" help:"Profile of limits and permissions: default, notebook, post_process, tool, or one from the profiles file (see 'scidex-jail profiles')."`
	configFlag
	TmpRoot      string `name:"tmp-root" default:"/tmp" placeholder:"DIR" help:"Absolute directory that holds the run directories."`
	CgroupParent string `name:"cgroup-parent" placeholder:"PATH" help:"Delegated cgroup under which a run's leaf is made. Default: the jail's own cgroup."`
	UID          int    `name:"uid" default:"65534" help:"Host uid the analysis runs as when scidex-jail runs as root (never 0)."`
	GID          int    `name:"gid" default:"65534" help:"Host gid the analysis runs as when scidex-jail runs as root (never 0)."`
}

// profile loads the profiles and picks the one --profile names; from is
// the profiles file they came from ("" for the built-ins alone).
func (f *jailFlags) profile() (profile.Profile, string, error) {
	profiles, from, err := profile.LoadProfiles(f.Config)
	if err != nil {
		return profile.Profile{}, "", err
	}
	p, ok := profiles[f.Profile]
	if !ok {
		return profile.Profile{}, "", bad("--profile %q: no such profile; known: %s", f.Profile, strings.Join(profile.Names(profiles), ", "))
	}
	return p, from, nil
}
