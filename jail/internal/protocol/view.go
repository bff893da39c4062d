package protocol

import (
	"slices"

	"github.com/scidex/scidex-jail/landlock"
)

// A slot's view (issue 36): the config of its run but for what only the
// run decides, sent ahead of the run (Config.View) and built by the
// slot's init, which confines the thread that forks the target with it
// too. The run's config then carries only its own part (RunPart) and the
// digest of the rest; the init checks the digest against the view it
// built and completes the config from it (Complete).
//
// The digests (Config.ViewSum) are the supervisor's, of the view it sent
// the slot and of the view its run asks for: the init compares them.

// SlotRunDir is the run directory's place in a view built ahead of its
// run (Config.View), at the view's root whatever the run's tmp-root: the
// run's config gives it its place and name, by a mount move.
const SlotRunDir = "/.scidex-slot-run"

// meminfoShown stands for the meminfo's content in a view: whether the
// view shows one is the view's, the content (a snapshot of the run's
// limits, written at its start) the run's.
const meminfoShown = "(the run's)"

// ViewOf is the view of a run's config, to be built ahead (Config.View):
// the config without what only its run decides (the command, its
// environment, the run directory's place, the hostname, the stdio, the
// meminfo's content), the run directory at SlotRunDir. A field added to
// Config is part of the view until it is named here and in RunPart: a
// slot never serves a run whose config differs in it, and the step that
// applies it runs in the slot.
//
// The identity (uid, gid, groups) and the Landlock and seccomp policies
// are the view's too: a slot's init confines itself with them ahead of
// its run, so a run whose identity or policies differ is another view.
// The run directory's Landlock rule is on the path SlotRunDir in the
// view: rules attach to the inode a path names, here the root of the run
// directory's mount, which the run's mount move to its name keeps; the
// run's own path is put back as SlotRunDir so that every run of a shape
// has one view.
func ViewOf(c *Config) Config {
	v := *c
	v.Command, v.Env, v.RunDir, v.Hostname, v.Stdio, v.ViewSum = nil, nil, "", "", false, ""
	v.View = true
	v.Mounts.RunDir = SlotRunDir
	if v.Mounts.Meminfo != "" {
		v.Mounts.Meminfo = meminfoShown
	}
	v.Security.Landlock = swapPath(c.Security.Landlock, c.Mounts.RunDir, SlotRunDir)
	return v
}

// RunPart is the config a run sends the slot whose view was built from
// its ViewOf: only what the run decides. The supervisor adds ViewSum, the
// digest of the run's view, as it added the digest of the slot's to the
// view it sent (the supervisor hashes: the init links no crypto package,
// .ci/layering), and the init completes the part from the view it built
// (Complete) only when the two agree: it neither receives nor decodes
// the view a second time.
func RunPart(run *Config) Config {
	return Config{
		Command: run.Command, Env: run.Env, RunDir: run.RunDir, Hostname: run.Hostname, Stdio: run.Stdio,
		Mounts: Mounts{RunDir: run.Mounts.RunDir, Meminfo: run.Mounts.Meminfo},
	}
}

// Complete is the run's whole config from the view a slot built and the
// run's part (RunPart), once the init has checked that part.ViewSum is
// the view's: the config the run would have sent in full.
func Complete(view, part *Config) *Config {
	c := *view
	c.View, c.ViewSum = false, ""
	c.Command, c.Env, c.RunDir, c.Hostname, c.Stdio = part.Command, part.Env, part.RunDir, part.Hostname, part.Stdio
	c.Mounts.RunDir, c.Mounts.Meminfo = part.Mounts.RunDir, part.Mounts.Meminfo
	c.Security.Landlock = swapPath(view.Security.Landlock, SlotRunDir, part.Mounts.RunDir)
	return &c
}

// swapPath is a copy of pol with every path equal to from as to (nil:
// nil). Only whole paths: one below from stays as it is, and so another
// view.
func swapPath(pol *landlock.Policy, from, to string) *landlock.Policy {
	if pol == nil {
		return nil
	}
	p := *pol
	for _, l := range []*[]string{&p.ReadExec, &p.ReadOnly, &p.ReadWrite, &p.Devices} {
		*l = slices.Clone(*l)
		for i, path := range *l {
			if path == from {
				(*l)[i] = to
			}
		}
	}
	return &p
}
