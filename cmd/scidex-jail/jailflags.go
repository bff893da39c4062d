package main

import (
	"strings"

	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// configFlag names the profiles file, for every command that reads it.
type configFlag struct {
	Config string `name:"config" placeholder:"FILE" help:"Profiles file (JSON). Default: /etc/scidex-jail/profiles.json when it exists."`
}

// jailFlags are the flags run and check share: which profile, and where
// and as whom a run would go. Their defaults are jail.DefaultTmpRoot and
// uidlease.Default (a struct tag cannot name a constant; a test holds
// them equal).
type jailFlags struct {
	Profile string `name:"profile" short:"p" default:"default" help:"Profile of limits and permissions: default, notebook, post_process, tool, or one from the profiles file (see 'scidex-jail profiles')."`
	configFlag
	TmpRoot      string `name:"tmp-root" default:"/tmp" placeholder:"DIR" help:"Absolute directory that holds the run directories."`
	CgroupParent string `name:"cgroup-parent" placeholder:"PATH" help:"Delegated cgroup under which a run's leaf is made. Default: the jail's own cgroup."`
	idFlags
}

// idFlags say as whom an analysis runs when the jail runs as root: ids
// leased from a range (the default), or fixed ones. Rootless runs are the
// caller's uid whatever they say.
type idFlags struct {
	UID      *int   `name:"uid" placeholder:"N" help:"A fixed host uid for the analysis when scidex-jail runs as root (never 0; give --gid too). Default: each run leases a uid and gid of its own from --uid-range."`
	GID      *int   `name:"gid" placeholder:"N" help:"A fixed host gid, with --uid (never 0)."`
	UIDRange string `name:"uid-range" default:"1879048192-1879113727" placeholder:"FIRST-LAST" help:"Host ids each run leases its own uid and gid from when scidex-jail runs as root and --uid is not given; no account, group, /etc/subuid or /etc/subgid range may use them (docs/security.md)."`
}

// ids are the host uid and gid the flags fix (0, 0: lease one from the
// range) and the range, by the rule a run's request follows.
func (f *idFlags) ids() (uid, gid int, r uidlease.Range, err error) {
	return request.IDs(f.UID, f.GID, f.UIDRange, flagOf)
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
