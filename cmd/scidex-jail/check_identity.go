package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/view"
)

// checkIdentity says who the analysis would be: uid 1000 inside, the host
// uid it maps to, and, rootless, the caller's supplementary groups it
// keeps (it cannot drop them) and what holds the filesystem promises
// against them. MISSING when the plan refuses the run because its view
// would show what only one of those groups opens (view.GroupExposureError).
func checkIdentity(pl *jail.Plan, planErr error) checkLine {
	e := pl.Enforced
	l := checkLine{Name: "identity", State: stateOK,
		Text: fmt.Sprintf("the analysis runs as uid %d inside = host uid %d, gid %d", e.UID, e.HostUID, e.HostGID)}
	if kept := e.Identity.HostGroupsKept; len(kept) == 0 {
		l.Text += ", no supplementary group"
	} else {
		names := make([]string, len(kept))
		for i, g := range kept {
			names[i] = fmt.Sprintf("%s (%d)", orDefault(g.Name, "unnamed"), g.GID)
		}
		held := make([]string, len(e.Identity.HeldBy))
		for i, h := range e.Identity.HeldBy {
			held[i] = string(h)
		}
		l.Text += fmt.Sprintf(", keeping the supplementary groups %s, shown inside as %d: %s; held off the files only they open by: %s",
			strings.Join(names, ", "), kept[0].InsideGID, e.Identity.Why, orDefault(strings.Join(held, ", "), "no layer"))
	}
	var ge *view.GroupExposureError
	if errors.As(planErr, &ge) {
		l.State = stateMissing
		l.Text += "; " + ge.Finding()
		l.Fix = ge.Fix()
	}
	return l
}
