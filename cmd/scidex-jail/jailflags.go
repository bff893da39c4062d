package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
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
// range) and the range.
func (f *idFlags) ids() (uid, gid int, r uidlease.Range, err error) {
	if r, err = uidlease.ParseRange(f.UIDRange); err != nil {
		return 0, 0, r, bad("--uid-range: %w", err)
	}
	switch {
	case f.UID == nil && f.GID == nil:
		return 0, 0, r, nil
	case f.UID == nil || f.GID == nil:
		return 0, 0, r, bad("--uid and --gid go together: give both for fixed ids, or neither for ids leased from --uid-range")
	case *f.UID <= 0 || *f.GID <= 0:
		return 0, 0, r, bad("--uid/--gid %d:%d must be non-zero, so the analysis never runs as host root", *f.UID, *f.GID)
	}
	return *f.UID, *f.GID, r, nil
}

// args gives the flags back as a request's arguments (serve's slots).
func (f *idFlags) args() []string {
	a := []string{"--uid-range", f.UIDRange}
	if f.UID != nil {
		a = append(a, "--uid", strconv.Itoa(*f.UID))
	}
	if f.GID != nil {
		a = append(a, "--gid", strconv.Itoa(*f.GID))
	}
	return a
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

// origin is from (the profile's, with the limits given as flags) with
// the options given as flags over p: each message about them then names
// the flag, and about the profile's values the profile's field. A list
// holds the profile's entries first, then the flags' (runCmd.specIn).
func (c *runCmd) origin(p profile.Profile, from option.Origin) option.Origin {
	for _, l := range []struct {
		list, as option.Row
		from     int
		given    bool
	}{
		{option.ReadOnly, option.Inputs, len(p.ReadOnly), len(c.Input) > 0},
		{option.ReadOnly, option.ReadOnly, len(p.ReadOnly) + len(c.Input), len(c.RO) > 0},
		{option.ReadWrite, option.ReadWrite, len(p.ReadWrite), len(c.RW) > 0},
		{option.Env, option.Env, len(p.Env), len(c.Env) > 0},
		{option.Net, option.Net, 0, c.Net != ""},
		{option.AllowTCP, option.AllowTCP, 0, len(c.AllowTCP) > 0},
		{option.AllowDegraded, option.AllowDegraded, 0, len(c.Degrade) > 0},
	} {
		if l.given {
			from = from.Added(l.list, l.from, l.as)
		}
	}
	return from
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

// optIns are the protections the flags give up, in the order the report
// has always listed them: those switched off, then those degraded.
func optIns(degrade []degradeFlag, disable []disableFlag) promise.OptIns {
	out := make(promise.OptIns, 0, len(degrade)+len(disable))
	for _, d := range disable {
		out = append(out, promise.OptIn(d))
	}
	for _, d := range degrade {
		out = append(out, promise.OptIn(d))
	}
	return out
}
