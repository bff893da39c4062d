package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/scidex/scidex-jail/jail/hostcheck"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
)

// promiseLines are check's verdict per promise of the contract: the same
// table a run decides on (promise.EvaluatePromises), fed with what the probes
// found instead of what a run assumes. A promise holding with fewer layers
// than the profile requires is MISSING, or DEGRADED when the profile's
// allow_degraded gives the missing layers up.
func promiseLines(p profile.Profile, sp hostcheck.Security, cg checkLine) []checkLine {
	net, _ := netmode.Lookup(p.Net) // LoadProfiles refused a mode with no row
	h := promise.HostLayers{Net: net.Network(), LandlockABI: sp.Landlock.ABI, LandlockErr: sp.Landlock.Err, LandlockFix: sp.Landlock.Hint}
	if len(sp.Landlock.Failed) > 0 {
		h.LandlockABI, h.LandlockErr = 0, "Landlock did not deny what it should: "+strings.Join(sp.Landlock.Failed, "; ")
	}
	if sc := sp.Seccomp; sc.Err != "" || len(sc.Failed) > 0 {
		h.SeccompErr = "the seccomp check failed"
	}
	if cg.State != stateOK {
		h.CgroupErr = "the cgroup check failed"
	}
	optIns := p.OptIns()
	var lines []checkLine
	for _, st := range promise.EvaluatePromises(h, p.RequireLayers) {
		l := checkLine{Name: "promise " + string(st.Promise), Text: st.What + ": " + st.Layers()}
		switch {
		case st.Holds():
			l.State = stateOK
		case st.Allowed(optIns):
			l.State = stateDegraded
			l.Fix = orDefault(st.Fix(), "nothing to get: the layer is off by choice")
			l.Text += " (the profile's allow_degraded lets runs start with less)"
		default:
			l.State = stateMissing
			l.Fix = st.Fix()
			if o := st.OptIns(); len(o) > 0 {
				l.Fix = orDefault(l.Fix, "see the checks above") + "; or run with less: " + withLess(p, o)
			}
		}
		lines = append(lines, l)
	}
	return lines
}

// withLess is how to run with the layers ins give up, each in a language
// that can give it up: a protection a profile may degrade as a profile of
// the profiles file the parser reads ({"base": ..., "allow_degraded":
// ["landlock"]}) or run's flag; one no profile can give up (a layer
// switched off) as run's flag alone.
func withLess(p profile.Profile, ins promise.OptIns) string {
	var degrade []string
	var parts []string
	for _, o := range ins {
		if o.Kind == promise.OptInDegrade {
			degrade = append(degrade, strconv.Quote(string(o.Protection)))
			parts = append(parts, o.String())
			continue
		}
		parts = append(parts, o.String()+" on each run (no profile field switches a layer off)")
	}
	text := strings.Join(parts, " and ")
	if len(degrade) > 0 {
		text += fmt.Sprintf(`; or, for every run, a profile of the profiles file based on this one: {"base": %q, "allow_degraded": [%s]}`, p.Name, strings.Join(degrade, ", "))
	}
	return text
}
