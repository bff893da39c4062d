package promise

import (
	"fmt"
	"slices"
	"strings"
)

// Promise is one line of the run's contract. Each is held by one or more
// layers (promiseTable); a run starts only when every promise has at least
// the layers the profile requires (RequiredLayers), unless the caller
// opted into less by name. Fail closed per promise, not per kernel feature:
// a Landlock right the kernel lacks is a missing second layer where the
// mount view or a namespace already holds the promise, not a reason to
// refuse the run.
type Promise string

const (
	PromiseFSWrite         Promise = "fs_write"
	PromiseFSRead          Promise = "fs_read"
	PromiseSignalsOut      Promise = "signals_out"
	PromisePtraceOut       Promise = "ptrace_out"
	PromiseAbstractSockets Promise = "abstract_sockets_out"
	PromiseUnixSockets     Promise = "unix_sockets_out"
	PromiseNoPostgres      Promise = "no_postgres"
	PromiseNetwork         Promise = "network"
	PromiseKernelSurface   Promise = "kernel_surface"
	PromiseLimits          Promise = "limits"
	PromiseNothingLeft     Promise = "nothing_left"
)

// promiseDef is one row of the contract: what the promise says, whether it
// is a filesystem promise (two layers required by default), and the layers
// that can hold it, or byNet: the network mode's row says which
// (Network.Layers).
type promiseDef struct {
	promise Promise
	what    string
	fs      bool
	layers  []Layer
	byNet   bool
}

func layers(l ...Layer) []Layer { return l }

// promiseTable is the contract, in the order the report and check print it.
var promiseTable = []promiseDef{
	{PromiseFSWrite, "no write outside the run directory, the analysis' scratch (HOME), /dev/shm and the read-write paths", true,
		layers(LayerMountView, LayerLandlockFS), false},
	{PromiseFSRead, "no read outside the system directories, the data directories and the run's own paths", true,
		layers(LayerMountView, LayerLandlockFS), false},
	{PromiseSignalsOut, "no signal reaches a process outside the run", false,
		layers(LayerPIDNS, LayerLandlockScope), false},
	{PromisePtraceOut, "no ptrace or process_vm_* of a process outside the run", false,
		layers(LayerPIDNS, LayerSeccomp), false},
	{PromiseAbstractSockets, "no abstract unix socket outside the run is reached", false,
		nil, true}, // the network mode's row gives the layers (Network.Layers)
	{PromiseUnixSockets, "no pathname unix socket of the host (PostgreSQL's, D-Bus) is reached", false,
		layers(LayerMountView, LayerLandlockUnix), false},
	{PromiseNoPostgres, "no TCP connection to PostgreSQL's port or the profile's db_ports (its unix socket: unix_sockets_out)", false,
		nil, true}, // the network mode's row gives the layers (Network.Layers)
	{PromiseNetwork, "the network mode holds", false,
		nil, true}, // the network mode's row gives the layers (Network.Layers)
	{PromiseKernelSurface, "no mount, bpf, kexec, module, keyring, io_uring, new namespace or terminal injection", false,
		layers(LayerSeccomp), false},
	{PromiseLimits, "memory, CPU and PID limits enforced", false,
		layers(LayerCgroup), false},
	{PromiseNothingLeft, "no process of the run outlives it", false,
		layers(LayerPIDNS, LayerCgroup), false},
}

// Promises lists every promise's name, in table order.
func Promises() []Promise {
	out := make([]Promise, len(promiseTable))
	for i, d := range promiseTable {
		out[i] = d.promise
	}
	return out
}

// DefaultLayers is how many layers a promise needs unless a profile asks
// for more: two for the filesystem promises, one for the rest.
func DefaultLayers(p Promise) int {
	for _, d := range promiseTable {
		if d.promise == p {
			if d.fs {
				return 2
			}
			return 1
		}
	}
	return 0
}

// maxLayers is the most layers any of the network modes nets offers for p.
func maxLayers(p Promise, nets []Network) int {
	n := 0
	for _, d := range promiseTable {
		if d.promise != p {
			continue
		}
		n = len(d.layers)
		if d.byNet {
			for _, m := range nets {
				n = max(n, len(m.Layers[p]))
			}
		}
	}
	return n
}

// PromiseState is one promise on one host: the layers that hold it, the
// ones that do not and why, and how many are required.
type PromiseState struct {
	Promise  Promise
	What     string
	Held     []Layer
	Missing  []MissingLayer
	Required int
}

// MissingLayer is a layer that does not hold a promise on this run, why,
// and how to get it.
type MissingLayer struct {
	Layer  Layer
	Reason string // what was found
	Fix    string // how to get it ("" when the caller switched it off)
	OptIn  OptIn  // the opt-in that lets a run go without it (the zero OptIn for none)
}

// Holds says whether the promise has at least the layers required.
func (s PromiseState) Holds() bool { return len(s.Held) >= s.Required }

// EvaluatePromises computes, for every promise, which layers hold it on a
// host, given the profile's required counts (nil: the defaults).
func EvaluatePromises(h HostLayers, required map[Promise]int) []PromiseState {
	out := make([]PromiseState, 0, len(promiseTable))
	for _, d := range promiseTable {
		st := PromiseState{Promise: d.promise, What: d.what, Required: DefaultLayers(d.promise)}
		if n, ok := required[d.promise]; ok {
			st.Required = n
		}
		ls := d.layers
		if d.byNet {
			ls = h.Net.Layers[d.promise]
		}
		if d.promise == PromiseNetwork {
			st.What = h.Net.what(d.what)
		}
		for _, l := range ls {
			if m, ok := h.missing(l); ok {
				st.Missing = append(st.Missing, m)
			} else {
				st.Held = append(st.Held, l)
			}
		}
		out = append(out, st)
	}
	return out
}

// Allowed says whether a run may start with this promise: it holds, or it
// holds with fewer layers than required and every missing layer was given
// up by one of the caller's opt-ins (the very one its MissingLayer names).
func (s PromiseState) Allowed(optIns []OptIn) bool {
	if s.Holds() {
		return true
	}
	if len(s.Missing) == 0 {
		return false // the profile asks for more layers than exist
	}
	for _, m := range s.Missing {
		if m.OptIn == (OptIn{}) || !slices.Contains(optIns, m.OptIn) {
			return false
		}
	}
	return true
}

// Fix says how to get the missing layers of a promise that does not hold.
func (s PromiseState) Fix() string {
	var fixes []string
	for _, m := range s.Missing {
		if m.Fix != "" && !slices.Contains(fixes, m.Fix) {
			fixes = append(fixes, m.Fix)
		}
	}
	if len(s.Missing) == 0 && !s.Holds() {
		fixes = append(fixes, fmt.Sprintf("only %d layer(s) exist for %s in this network mode: lower require_layers.%s in the profile", len(s.Held), s.Promise, s.Promise))
	}
	return strings.Join(fixes, "; ")
}

// OptIns are the opt-ins that would let a run go without the missing
// layers of s.
func (s PromiseState) OptIns() OptIns {
	var opts OptIns
	for _, m := range s.Missing {
		if m.OptIn != (OptIn{}) && !slices.Contains(opts, m.OptIn) {
			opts = append(opts, m.OptIn)
		}
	}
	return opts
}

// describe is a promise's state in one line for errors and degraded
// entries.
func (s PromiseState) describe() string {
	return fmt.Sprintf("%s (%s) %s", s.Promise, s.What, s.Layers())
}

// Layers says which layers hold the promise, how many are required, and
// why the others are missing.
func (s PromiseState) Layers() string {
	var b strings.Builder
	held := "no layer"
	if len(s.Held) > 0 {
		held = fmt.Sprintf("%d layer(s) (%s)", len(s.Held), joinLayers(s.Held))
	}
	fmt.Fprintf(&b, "holds with %s, %d required", held, s.Required)
	for _, m := range s.Missing {
		fmt.Fprintf(&b, "; missing %s: %s", m.Layer, m.Reason)
	}
	return b.String()
}

// Degraded is the report's line for a promise that holds with fewer layers
// than required because the caller said so: what holds it, what is missing
// and the opt-in that allowed it.
func (s PromiseState) Degraded() string {
	return s.describe() + " (allowed by " + s.OptIns().String() + ")"
}

func joinLayers(ls []Layer) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, ", ")
}

// PromiseError is a run refused because a promise would hold with fewer
// layers than required. Fix says how to get the missing layers; OptIns
// the opt-ins that would run with less anyway (none when none would).
type PromiseError struct {
	State  PromiseState
	Fix    string
	OptIns OptIns
}

func (e *PromiseError) Error() string {
	s := "promise " + e.State.describe()
	if e.Fix != "" {
		s += "; to get it: " + e.Fix
	}
	if len(e.OptIns) > 0 {
		s += "; to run anyway with fewer layers: " + e.OptIns.String() + " (the report then lists the promise as degraded)"
	}
	return s
}

// Check returns the promises that hold with fewer layers than
// required but were allowed by the caller's opt-ins (for the report's
// degraded list), or a *PromiseError for the first that was not.
func Check(states []PromiseState, optIns []OptIn) ([]PromiseState, error) {
	var short []PromiseState
	for _, st := range states {
		if st.Holds() {
			continue
		}
		if !st.Allowed(optIns) {
			return nil, &PromiseError{State: st, Fix: st.Fix(), OptIns: st.OptIns()}
		}
		short = append(short, st)
	}
	return short, nil
}

// ValidateRequireLayers checks a profile's require_layers: known promises,
// and counts that only raise the default (running with less is
// --allow-degraded's job) up to the layers that exist for the promise in
// any of the network modes nets (every row of jail/netmode's table).
func ValidateRequireLayers(m map[Promise]int, nets []Network) error {
	for p, n := range m {
		def := DefaultLayers(p)
		switch {
		case def == 0:
			return fmt.Errorf("%q: no such promise; known: %s", p, joinPromises(Promises()))
		case n < def:
			return fmt.Errorf("%s: %d is below the default of %d; a profile can only require more layers (to run with fewer, use allow_degraded)", p, n, def)
		case n > maxLayers(p, nets):
			return fmt.Errorf("%s: %d layers required, but at most %d exist for it", p, n, maxLayers(p, nets))
		}
	}
	return nil
}

func joinPromises(ps []Promise) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// FSHeldBy is what holds both filesystem promises on this run: the layers
// that keep what a rootless run's kept supplementary groups could open out
// of the analysis' reach (groups.go), since the kernel still grants those
// groups their rights on every host file the view shows.
func FSHeldBy(states []PromiseState) []Layer {
	var read, write []Layer
	for _, st := range states {
		switch st.Promise {
		case PromiseFSRead:
			read = st.Held
		case PromiseFSWrite:
			write = st.Held
		}
	}
	var out []Layer
	for _, l := range read {
		if slices.Contains(write, l) {
			out = append(out, l)
		}
	}
	return out
}

// Report is the report's enforced.promises: promise -> the layers
// that hold it on this run.
func Report(states []PromiseState) map[Promise][]Layer {
	out := make(map[Promise][]Layer, len(states))
	n := 0
	for _, st := range states {
		n += len(st.Held)
	}
	// One array for every promise's copy (a plan per request made one
	// for each), each capped at its end: an append to one never writes
	// into the next.
	all := make([]Layer, 0, n)
	for _, st := range states {
		i := len(all)
		all = append(all, st.Held...)
		out[st.Promise] = all[i:len(all):len(all)]
	}
	return out
}
