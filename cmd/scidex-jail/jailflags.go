package main

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// configFlag names the profiles file, for every command that reads it.
type configFlag struct {
	Config string `name:"config"`
}

// jailFlags are the flags run and check share: which profile, and where
// and as whom a run would go. Their defaults are jail.DefaultTmpRoot and
// uidlease.Default (a struct tag cannot name a constant; a test holds
// them equal).
type jailFlags struct {
	Profile string `name:"profile" short:"p" default:"default"`
	configFlag
	TmpRoot      string `name:"tmp-root" default:"/tmp"`
	CgroupParent string `name:"cgroup-parent"`
	idFlags
}

// idFlags say as whom an analysis runs when the jail runs as root: ids
// leased from a range (the default), or fixed ones. Rootless runs are the
// caller's uid whatever they say.
type idFlags struct {
	UID      *int   `name:"uid"`
	GID      *int   `name:"gid"`
	UIDRange string `name:"uid-range" default:"1879048192-1879113727"`
}

// ids are the host uid and gid the flags fix (0, 0: lease one from the
// range) and the range, by the rule a run's request follows.
func (f *idFlags) ids() (uid, gid int, r uidlease.Range, err error) {
	return request.IDs(f.UID, f.GID, f.UIDRange, option.Flag)
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

// degradeFlag is one protection --allow-degraded names, read once here
// (promise.ParseOptIns); disableFlag one --unsafe-disable names.
type (
	degradeFlag promise.OptIn
	disableFlag promise.OptIn
)

func (f *degradeFlag) Decode(ctx *kong.DecodeContext) error {
	return decodeOptIn(ctx, promise.OptInDegrade, (*promise.OptIn)(f))
}

func (f *disableFlag) Decode(ctx *kong.DecodeContext) error {
	return decodeOptIn(ctx, promise.OptInDisable, (*promise.OptIn)(f))
}

func decodeOptIn(ctx *kong.DecodeContext, kind promise.OptInKind, o *promise.OptIn) error {
	var s string
	if err := ctx.Scan.PopValueInto("layer", &s); err != nil {
		return err
	}
	ins, err := promise.ParseOptIns(kind, []string{s})
	if err != nil {
		return fmt.Errorf("%w: %w", jail.ErrBadSpec, err)
	}
	*o = ins[0]
	return nil
}
