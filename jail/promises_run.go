package jail

import (
	"errors"

	"github.com/scidex/scidex-jail/landlock"
)

// lookLayers finds which layers this host gives a run of s: the kernel's
// Landlock ABI (asked of the kernel, not guessed from its version) and the
// layers switched off by name. Supervisor side, before anything is spawned.
func lookLayers(s *Spec) HostLayers {
	h := HostLayers{Net: s.Net, Disabled: s.Disable}
	if s.disabled("landlock") {
		return h
	}
	abi, err := landlock.ProbeABI()
	h.LandlockABI = abi
	var ue *landlock.UnsupportedError
	switch {
	case abi > 0:
	case errors.As(err, &ue):
		h.LandlockErr, h.LandlockFix = ue.Finding(), ue.Fix()
	case err != nil:
		h.LandlockErr = err.Error()
	}
	return h
}

// holdPromises decides which layers hold each promise on this run, records
// that in the report, and fails closed, before anything is spawned, when a
// promise would hold with fewer layers than the profile requires and the
// caller did not give those layers up by name. It returns the Landlock ABI
// the decision relied on: the init must find at least that.
func (sv *supervisor) holdPromises() (landlockABI int, err error) {
	h := lookLayers(sv.spec)
	states := EvaluatePromises(h, sv.spec.RequireLayers)
	r := &sv.rep.Enforced
	r.Promises = promiseReport(states)
	short, err := checkPromises(states, sv.spec.optIns())
	if err != nil {
		return 0, err
	}
	r.Degraded = []string{}
	for _, st := range short {
		r.Degraded = append(r.Degraded, st.Degraded())
	}
	return h.LandlockABI, nil
}

// promiseReport is the report's enforced.promises: promise -> the layers
// that hold it on this run.
func promiseReport(states []PromiseState) map[Promise][]Layer {
	out := make(map[Promise][]Layer, len(states))
	for _, st := range states {
		out[st.Promise] = append([]Layer{}, st.Held...)
	}
	return out
}
