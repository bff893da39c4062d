package promise

import (
	"slices"
	"testing"
)

// The network modes' rows as the promises see them: the layers jail/netmode's
// rows give (its TestRowLayers holds the rows to the same), here so that
// this package's tables can name a mode without importing the table (which
// imports this package).
var (
	NetNone = Network{Mode: "none", Means: "no network", Layers: map[Promise][]Layer{
		PromiseAbstractSockets: {LayerNetNS, LayerLandlockScope},
		PromiseNoPostgres:      {LayerNetNS, LayerSeccomp},
		PromiseNetwork:         {LayerNetNS, LayerSeccomp},
	}}
	NetLoopback = Network{Mode: "loopback", Means: "the run's own only", Layers: map[Promise][]Layer{
		PromiseAbstractSockets: {LayerNetNS, LayerLandlockScope},
		PromiseNoPostgres:      {LayerNetNS},
		PromiseNetwork:         {LayerNetNS},
	}}
	NetHost = Network{Mode: "host", Means: "outbound TCP to allowed ports only", Layers: map[Promise][]Layer{
		PromiseAbstractSockets: {LayerLandlockScope}, // the host's network namespace is shared
		PromiseNoPostgres:      {LayerLandlockTCP},
		PromiseNetwork:         {LayerLandlockTCP},
	}}
	allNets = []Network{NetNone, NetLoopback, NetHost}
)

// TestNetworkDecides: the network's promises take their layers and the
// network promise its meaning from the mode's row alone: a mode this
// package has never seen gets what its row says.
func TestNetworkDecides(t *testing.T) {
	tunnel := Network{Mode: "tunnel", Means: "only through the supervisor", Layers: map[Promise][]Layer{
		PromiseAbstractSockets: {LayerNetNS},
		PromiseNoPostgres:      {LayerNetNS, LayerSeccomp, LayerLandlockTCP},
		PromiseNetwork:         {LayerNetNS, LayerLandlockTCP},
	}}
	states := EvaluatePromises(HostLayers{LandlockABI: 7, Net: tunnel}, nil)
	for _, st := range states {
		if want, ok := tunnel.Layers[st.Promise]; ok && !slices.Equal(st.Held, want) {
			t.Errorf("EvaluatePromises(tunnel)[%s] = %q, want the row's %q", st.Promise, st.Held, want)
		}
		if st.Promise == PromiseNetwork && st.What != "the network mode holds (tunnel: only through the supervisor)" {
			t.Errorf("EvaluatePromises(tunnel)[network].What = %q, want the row's meaning", st.What)
		}
	}
	if err := ValidateRequireLayers(map[Promise]int{PromiseNoPostgres: 3}, append(allNets, tunnel)); err != nil {
		t.Errorf("ValidateRequireLayers(no_postgres: 3) with the tunnel row = %v, want nil: the row has 3", err)
	}
	if err := ValidateRequireLayers(map[Promise]int{PromiseNoPostgres: 3}, allNets); err == nil {
		t.Errorf("ValidateRequireLayers(no_postgres: 3) without it = nil, want at most 2")
	}
	if got, want := NetPromises(), []Promise{PromiseAbstractSockets, PromiseNoPostgres, PromiseNetwork}; !slices.Equal(got, want) {
		t.Errorf("NetPromises() = %q, want %q", got, want)
	}
}

// TestNoModeNoNetworkLayers: without a mode's row the network's promises
// have no layer, so a run that forgot it is refused, never let through.
func TestNoModeNoNetworkLayers(t *testing.T) {
	_, err := Check(EvaluatePromises(HostLayers{LandlockABI: 7}, nil), nil)
	if err == nil {
		t.Errorf("Check(no network mode) = nil, want a refusal")
	}
}
