package main

import (
	"maps"
	"strings"

	"github.com/scidex/scidex-jail/jail/profile"
)

// configFlag names the profiles file, for every command that reads it.
// The help of this file's flags is in their flagHelp methods (help.go).
type configFlag struct {
	Config string `name:"config" placeholder:"FILE"`
}

// jailFlags are the flags run and check share: which profile, and where
// and as whom a run would go. Their defaults are jail.DefaultTmpRoot and
// jail.DefaultHostUID (a struct tag cannot name a constant; a test holds
// them equal).
type jailFlags struct {
	Profile string `name:"profile" short:"p" default:"default"`
	configFlag
	TmpRoot      string `name:"tmp-root" default:"/tmp" placeholder:"DIR"`
	CgroupParent string `name:"cgroup-parent" placeholder:"PATH"`
	UID          int    `name:"uid" default:"65534"`
	GID          int    `name:"gid" default:"65534"`
}

func (configFlag) flagHelp() map[string]string {
	return map[string]string{
		"config": "Profiles file (JSON). Default: /etc/scidex-jail/profiles.json when it exists.",
	}
}

func (f *jailFlags) flagHelp() map[string]string {
	h := map[string]string{
		"profile":       "Profile of limits and permissions: default, notebook, post_process, tool, or one from the profiles file (see 'scidex-jail profiles').",
		"tmp-root":      "Absolute directory that holds the run directories.",
		"cgroup-parent": "Delegated cgroup under which a run's leaf is made. Default: the jail's own cgroup.",
		"uid":           "Host uid the analysis runs as when scidex-jail runs as root (never 0).",
		"gid":           "Host gid the analysis runs as when scidex-jail runs as root (never 0).",
	}
	maps.Copy(h, f.configFlag.flagHelp())
	return h
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
