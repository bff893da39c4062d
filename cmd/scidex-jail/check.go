package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/hostcheck"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// checkCmd is `scidex-jail check`: for this host and one profile, what each
// protection needs, whether the kernel gives it, and how to get it when it
// does not. Every check tries the real operation (namespaces, Landlock and
// seccomp in child processes, the cgroup parent, the tmp-root), so what it
// says is what a run would meet. Exit status 0 means a run with the profile
// gets every protection in full; 1 means at least one is missing or could
// only be had degraded; 125 means the profile or the flags are bad.
type checkCmd struct {
	jailFlags

	uid, gid int            // the ids the probes run as: fixed, or one leased for the check
	uidRange uidlease.Range // where runs lease theirs
	fixedIDs bool
}

// checkState is the outcome of one check.
type checkState string

const (
	stateOK       checkState = "OK"
	stateMissing  checkState = "MISSING"
	stateDegraded checkState = "DEGRADED" // runs start, with less than asked (profile allows it)
)

// checkLine is one protection: its state, what was found, and how to fix it.
type checkLine struct {
	State checkState
	Name  string
	Text  string
	Fix   string // empty when OK
}

func (c *checkCmd) Run() error {
	p, from, err := c.profile()
	if err != nil {
		return err
	}
	if c.uid, c.gid, c.uidRange, err = c.ids(); err != nil {
		return err
	}
	c.fixedIDs = c.uid != 0
	lines := c.checks(p)
	source := "built-in"
	if from != "" {
		source = "from " + from
	}
	printCheck(os.Stdout, p, source, lines)
	for _, l := range lines {
		if l.State != stateOK {
			return exitError{1}
		}
	}
	return nil
}

// checks runs every check for profile p, in the order a run meets them.
func (c *checkCmd) checks(p profile.Profile) []checkLine {
	ids, release := c.checkIDs() // check_ids.go
	defer release()
	pl, done, planErr := c.probePlan(p)
	defer done()
	sec := hostcheck.ProbeSecurity(pl.Init.Security)
	cg, info := checkCgroup(c.CgroupParent)
	limits := pl.Cgroup
	if limits == nil {
		limits = &jail.CgroupPlan{}
	}
	lines := []checkLine{
		ids,
		checkUserns(pl),
		checkInit(pl),
		checkIdentity(pl, planErr),
		checkLandlock(p, sec),
		checkSeccomp(p, sec),
		cg,
		checkControllers(p, limits, info, cg.State == stateOK), // check_cgroup.go
		checkTmpRoot(c.TmpRoot, c.uid, c.gid),
	}
	// What a deployment must set up (check_host.go), then the promises.
	lines = append(lines, checkHostSetup(c.CgroupParent, info)...)
	return append(lines, promiseLines(p, sec, cg)...)
}

// probePlan is the plan of a run of p as check tries it, made by the same
// code as a run's: the profile's spec with this command's flags, the host
// as LookHost sees it, and a run directory of its own under a temporary
// tmp-root, so that every path of the plan's policies exists. err is why
// the plan refuses the run, if it does; done removes the temporary
// directory.
func (c *checkCmd) probePlan(p profile.Profile) (pl *jail.Plan, done func(), err error) {
	s := p.Spec()
	s.ID, s.Command = "check", []string{"/bin/true"}
	s.CgroupParent, s.HostUID, s.HostGID = c.CgroupParent, c.uid, c.gid
	s.Root, _ = os.Getwd()
	// The tmp-root check says what is wrong with --tmp-root; the probe
	// needs some directory all the same.
	dir, err := os.MkdirTemp(c.TmpRoot, ".scidex-jail-check-")
	if err != nil {
		dir, err = os.MkdirTemp("", ".scidex-jail-check-")
	}
	done = func() {}
	if err == nil {
		done = func() { os.RemoveAll(dir) }
		os.Chmod(dir, 0o755)
		s.TmpRoot = dir
		os.Mkdir(s.RunDir(), 0o700)
	}
	// A plan refused for its promises still says how the init would be
	// born and what it would apply; the promise lines report the refusal.
	// Planned as given, not validated: check reports a bad flag on a line
	// of its own, and still shows what the plan would do.
	pl, _, err = jail.BuildPlan(&jail.Resolved{Spec: s, RealTmpRoot: s.TmpRoot}, jail.LookHost(&s))
	// The analysis' home (its scratch) exists only in the run's view: a
	// directory of the probe's own stands in for it.
	if pl != nil && pl.Init.Security.Landlock != nil && s.TmpRoot == dir {
		home := filepath.Join(dir, "home")
		os.Mkdir(home, 0o700)
		ll := pl.Init.Security.Landlock
		for i, p := range ll.ReadWrite {
			if p == jail.AnalysisHome {
				ll.ReadWrite[i] = home
			}
		}
	}
	return pl, done, err
}

// printCheck writes the header, one line per check (with a fix line under
// each that is not OK) and the verdict.
func printCheck(w io.Writer, p profile.Profile, source string, lines []checkLine) {
	fmt.Fprintf(w, "profile %s (%s): net %s, memory %s, cpus %g, pids %d, disk %s; checked as uid %d\n",
		p.Name, source, p.Net, limits.FormatSize(p.Limits.Int(limits.Memory)), p.Limits.CPUs(limits.CPUQuota), p.Limits.Int(limits.PIDs), limits.FormatSize(p.Limits.Int(limits.Disk)), os.Geteuid())
	bad := 0
	for _, l := range lines {
		fmt.Fprintf(w, "%-8s %s: %s\n", l.State, l.Name, l.Text)
		if l.State != stateOK {
			bad++
			fmt.Fprintf(w, "%-8s fix: %s\n", "", l.Fix)
		}
	}
	if bad == 0 {
		fmt.Fprintf(w, "verdict: profile %s can be enforced in full on this host\n", p.Name)
		return
	}
	fmt.Fprintf(w, "verdict: profile %s cannot be enforced in full on this host: %d of %d checks not OK (see the fix lines)\n", p.Name, bad, len(lines))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
