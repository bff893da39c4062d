package promise

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/landlock"
)

// Layer is one mechanism that holds promises, as the report names it.
type Layer string

const (
	LayerMountView     Layer = "mount view"     // new read-only root: only what the run needs, socket dirs hidden
	LayerLandlockFS    Layer = "landlock fs"    // Landlock filesystem rules (ABI 1)
	LayerLandlockScope Layer = "landlock scope" // Landlock signal and abstract socket scoping (ABI 6)
	LayerLandlockTCP   Layer = "landlock tcp"   // Landlock TCP connect/bind rules (ABI 4)
	LayerLandlockUnix  Layer = "landlock unix"  // Landlock resolve_unix: pathname unix sockets (ABI 9)
	LayerPIDNS         Layer = "pid namespace"  // the run sees and signals only its own processes; PID 1's exit ends them all
	LayerNetNS         Layer = "net namespace"  // an empty (or loopback-only) network of its own
	LayerSeccomp       Layer = "seccomp"        // the syscall filter
	LayerCgroup        Layer = "cgroup"         // the run's cgroup leaf: limits, and kill of whatever is left
)

// landlockLayers are the Landlock ABI each Landlock layer needs.
var landlockLayers = map[Layer]int{
	LayerLandlockFS: 1, LayerLandlockTCP: 4, LayerLandlockScope: 6, LayerLandlockUnix: 9,
}

// layerProtection is the protection each layer belongs to: giving it up
// by name (an OptIn) gives up the layer. The mount view and the
// namespaces belong to none: every run has them.
var layerProtection = map[Layer]Protection{
	LayerLandlockFS: ProtectLandlock, LayerLandlockTCP: ProtectLandlock, LayerLandlockScope: ProtectLandlock, LayerLandlockUnix: ProtectLandlock,
	LayerSeccomp: ProtectSeccomp, LayerCgroup: ProtectCgroup,
}

// HostLayers is what decides which layers a run has: the kernel's Landlock
// ABI, the protections switched off by name, and what the network mode
// gives the network's promises. It is a plain value so that the promise
// table is a pure function of it.
type HostLayers struct {
	LandlockABI int          // effective ABI of the running kernel; 0: no Landlock
	LandlockErr string       // why there is no Landlock ("" when ABI > 0)
	LandlockFix string       // how to get it ("": a kernel with Landlock enabled)
	Disabled    []Protection // switched off by name (OptInDisable): their layers are missing
	Net         Network      // the network mode's row's (jail/netmode): without it the network's promises have no layer

	// Set by probes that found a layer unusable (scidex-jail check): why.
	// A run finds out at the stage that uses the layer, and fails there.
	SeccompErr, CgroupErr string
}

// missing says whether layer l is absent on h, and why.
func (h HostLayers) missing(l Layer) (MissingLayer, bool) {
	m := MissingLayer{Layer: l}
	p, ok := layerProtection[l]
	if !ok {
		return m, false // mount view and namespaces: every run has them
	}
	if slices.Contains(h.Disabled, p) {
		m.OptIn = OptIn{OptInDisable, p}
		m.Reason = string(p) + " disabled by " + m.OptIn.String()
		return m, true
	}
	if p != ProtectLandlock {
		probeErr := h.SeccompErr // a switch, not a map made per layer of every plan
		if p == ProtectCgroup {
			probeErr = h.CgroupErr
		}
		if probeErr == "" {
			return m, false
		}
		m.Reason, m.Fix = probeErr, "see the "+string(p)+" check"
		return m, true
	}
	need := landlockLayers[l]
	m.OptIn = OptIn{OptInDegrade, ProtectLandlock}
	switch {
	case h.LandlockABI == 0:
		m.Reason = "this kernel has no Landlock"
		if h.LandlockErr != "" {
			m.Reason = h.LandlockErr
		}
		m.Fix = h.LandlockFix
		if m.Fix == "" {
			m.Fix = fmt.Sprintf("a kernel with Landlock enabled (%s)", landlock.KernelFor(need))
		}
	case h.LandlockABI < need:
		m.Reason = fmt.Sprintf("Landlock ABI %d, this layer needs ABI %d", h.LandlockABI, need)
		m.Fix = landlock.KernelFor(need)
	default:
		return m, false
	}
	return m, true
}

// Protection is one the caller may give up by name (Spec.OptIns): switch
// off (OptInDisable) or, for Landlock, run with whatever the kernel offers
// (OptInDegrade). Each holds some of
// the promises' layers (Layer.protection); the mount view and the
// namespaces are no protection of this kind: every run has them.
type Protection string

const (
	ProtectLandlock Protection = "landlock" // the Landlock layers: landlock fs, tcp, scope, unix
	ProtectSeccomp  Protection = "seccomp"  // the seccomp layer
	ProtectCgroup   Protection = "cgroup"   // the cgroup layer: the run's leaf and its limits
)

// OptInKind is how a protection is given up.
type OptInKind string

const (
	// OptInDegrade runs with what the kernel offers of the protection,
	// when that is less than the profile requires.
	OptInDegrade OptInKind = "degrade"
	// OptInDisable switches the protection off, whatever the kernel offers.
	OptInDisable OptInKind = "disable"
)

// The protections each kind of opt-in may name.
var (
	disableLayers = []Protection{ProtectLandlock, ProtectSeccomp, ProtectCgroup}
	degradeLayers = []Protection{ProtectLandlock}
)

// OptIn is a protection given up by name, the only way a run starts with a
// promise held by fewer layers than required: each missing layer must have
// been given up by one (PromiseState.Allowed). Compared as a value; its
// text (String) is for people and the report.
type OptIn struct {
	Kind       OptInKind
	Protection Protection
}

// String is the opt-in as the caller gives it on the command line, the way
// the report's degraded list and the errors name it: "--allow-degraded
// landlock", "--unsafe-disable seccomp" (jail/option's command-line names).
// The zero OptIn (none) is "".
func (o OptIn) String() string {
	switch o.Kind {
	case OptInDegrade:
		return option.Origin{}.Name(option.AllowDegraded) + " " + string(o.Protection)
	case OptInDisable:
		return option.Origin{}.Name(option.UnsafeDisable) + " " + string(o.Protection)
	}
	return ""
}

// OptIns are several opt-ins, as one text: "A and B".
type OptIns []OptIn

func (ins OptIns) String() string {
	s := make([]string, len(ins))
	for i, o := range ins {
		s[i] = o.String()
	}
	return strings.Join(s, " and ")
}

// ParseOptIns makes the protections named to give up as kind (a
// profile's allow_degraded, the flags, a request's fields) into opt-ins,
// once, where they are read; it refuses a name that is no protection of
// that kind, with an error that starts with the name, for the caller to
// put the option the user wrote in front of it.
func ParseOptIns(kind OptInKind, names []string) (OptIns, error) {
	out := make(OptIns, 0, len(names))
	for _, n := range names {
		o := OptIn{kind, Protection(n)}
		if err := o.Check(); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Check refuses an opt-in whose kind cannot give its protection up.
func (o OptIn) Check() error {
	switch {
	case o.Kind == OptInDisable && !slices.Contains(disableLayers, o.Protection):
		return fmt.Errorf("%q: known layers are %s", o.Protection, joinProtections(disableLayers))
	case o.Kind == OptInDegrade && !slices.Contains(degradeLayers, o.Protection):
		return fmt.Errorf("%q: only %s may be degraded", o.Protection, joinProtections(degradeLayers))
	case o.Kind != OptInDisable && o.Kind != OptInDegrade:
		return fmt.Errorf("%q: bug: an opt-in of no kind (%q)", o.Protection, o.Kind)
	}
	return nil
}

// Degradable reports whether p may be degraded by name.
func Degradable(p Protection) bool { return slices.Contains(degradeLayers, p) }

// Disabled are the protections switched off among ins.
func (ins OptIns) Disabled() []Protection {
	var out []Protection
	for _, o := range ins {
		if o.Kind == OptInDisable {
			out = append(out, o.Protection)
		}
	}
	return out
}

func joinProtections(ps []Protection) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}
