package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/hostcheck"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/profile"
)

// checkCgroup probes the delegated parent the run's leaf would go under.
func checkCgroup(parent string) (checkLine, hostcheck.CgroupInfo) {
	l := checkLine{Name: "cgroup"}
	info, err := hostcheck.ProbeCgroup(parent)
	if err != nil {
		l.State = stateMissing
		l.Text, l.Fix = hostcheck.Explain(err)
		if info.Version != 0 {
			l.Text = fmt.Sprintf("cgroup version %d, parents %s: %s", info.Version, strings.Join(info.Parents, ", "), l.Text)
		}
		return l, info
	}
	l.State = stateOK
	l.Text = fmt.Sprintf("cgroup version %d; run leaves go under %s, writable by this process", info.Version, strings.Join(info.Parents, ", "))
	if info.Version == 1 {
		l.Text += " (a hybrid host: the same limits and usage come from the v1 files)"
	}
	return l, info
}

// checkControllers compares the controllers the leaf of a run of p needs
// (cgroupfs's list, through hostcheck: memory always, the others for the
// limits that use them) with those the parent offers. A missing one's fix
// is the error a run would meet, and for a controller only a limit needs,
// the profile that switches that limit off.
func checkControllers(p profile.Profile, cg *jail.CgroupPlan, info hostcheck.CgroupInfo, probed bool) checkLine {
	needs := hostcheck.CgroupNeeds(info.Version, cg.Limits)
	var what []string
	for _, n := range needs {
		what = append(what, n.Controller+" ("+needText(p, n)+")")
	}
	l := checkLine{Name: "cgroup controllers"}
	if !probed {
		l.State = stateMissing
		l.Text = "the profile needs " + strings.Join(what, ", ") + "; not available: the cgroup check failed"
		l.Fix = "fix the cgroup check above"
		return l
	}
	var missing []string
	var off []*limits.Limit // limits whose switching off drops a missing controller
	for _, n := range needs {
		if slices.Contains(info.Controllers, n.Controller) {
			continue
		}
		missing = append(missing, n.Controller)
		if n.Always == "" {
			off = append(off, rowsOf(n)...)
		}
	}
	if len(missing) == 0 {
		l.State = stateOK
		l.Text = "the profile needs " + strings.Join(what, ", ") + "; all offered (" + strings.Join(info.Controllers, ", ") + ")"
		return l
	}
	l.State = stateMissing
	l.Text = fmt.Sprintf("the profile needs %s; missing %s (offered: %s)", strings.Join(what, ", "), strings.Join(missing, ", "), strings.Join(info.Controllers, ", "))
	l.Fix = "see the cgroup package documentation"
	if err := hostcheck.MissingControllers(info, cg.Limits); err != nil {
		_, l.Fix = hostcheck.Explain(err)
	}
	if advice := switchOff(p, off); advice != "" {
		l.Fix += "; " + advice
	}
	return l
}

// needText says what a controller is needed for: the profile's limits it
// holds, by their fields, and why every run needs it when it does.
func needText(p profile.Profile, n hostcheck.CgroupNeed) string {
	var parts []string
	for _, r := range rowsOf(n) {
		parts = append(parts, r.Field+" "+r.Format(p.Limits.Get(r)))
	}
	text := strings.Join(parts, ", ")
	if n.Always != "" {
		text += "; " + n.Always
	}
	return text
}

// rowsOf are the limits a controller holds: the rows naming its keys.
func rowsOf(n hostcheck.CgroupNeed) []*limits.Limit {
	var out []*limits.Limit
	for _, r := range limits.All {
		if r.Cgroup != "" && slices.Contains(n.Keys, r.Cgroup) {
			out = append(out, r)
		}
	}
	return out
}

// switchOff is the advice to run with the limits rows switched off, as a
// profile of the profiles file ({"base": ..., "cpus": "none"}: the JSON
// the profiles parser reads); "" when a row has no none.
func switchOff(p profile.Profile, rows []*limits.Limit) string {
	if len(rows) == 0 {
		return ""
	}
	fields := []string{fmt.Sprintf("%q: %q", "base", p.Name)}
	for _, r := range rows {
		if !r.None {
			return ""
		}
		fields = append(fields, fmt.Sprintf("%q: %q", r.Field, limits.NoLimit))
	}
	return "or switch off the limits that need it, with a profile of the profiles file based on this one: {" + strings.Join(fields, ", ") + "}"
}
