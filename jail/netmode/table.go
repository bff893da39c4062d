package netmode

import (
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/seccomp"
)

// All is the table of network modes, in the order help texts, messages and
// the schema list them. A new mode is a row here, and a line of its own in
// docs/security.md's table (MarkdownTable, held by a test); nothing else
// names a mode.
var All = []Mode{
	{
		Name: "none", Help: "no network", Means: "no network",
		Doc:          "no network: inet, inet6 and netlink sockets are refused (EAFNOSUPPORT)",
		OwnNamespace: true, Seccomp: seccomp.NetNone,
		Layers: map[promise.Promise][]promise.Layer{
			promise.PromiseAbstractSockets: {promise.LayerNetNS, promise.LayerLandlockScope},
			promise.PromiseNoPostgres:      {promise.LayerNetNS, promise.LayerSeccomp},
			promise.PromiseNetwork:         {promise.LayerNetNS, promise.LayerSeccomp},
		},
	},
	{
		Name: "loopback", Help: "lo only, e.g. for notebook kernels", Means: "the run's own only",
		Doc:          "inet sockets reach the run's own listeners only (notebook kernels)",
		OwnNamespace: true, Loopback: true, Seccomp: seccomp.NetInet,
		// Its lo is the run's own: the namespace holds the network alone.
		Layers: map[promise.Promise][]promise.Layer{
			promise.PromiseAbstractSockets: {promise.LayerNetNS, promise.LayerLandlockScope},
			promise.PromiseNoPostgres:      {promise.LayerNetNS},
			promise.PromiseNetwork:         {promise.LayerNetNS},
		},
	},
	{
		Name: "host", Help: "the host's network; outbound TCP only to the allowed TCP ports; UDP is not restricted",
		Means:   "outbound TCP to allowed ports only",
		Doc:     "the host's network, outbound TCP to the allowed ports only; UDP is not restricted (Landlock has no UDP rules), so DNS and any UDP service are reachable; the host's resolver is bound read-only",
		Seccomp: seccomp.NetInet, TCPPorts: true, Resolver: true,
		// The host's network is shared: only Landlock holds what leaves,
		// and the host's abstract sockets are reachable but for scoping.
		Layers: map[promise.Promise][]promise.Layer{
			promise.PromiseAbstractSockets: {promise.LayerLandlockScope},
			promise.PromiseNoPostgres:      {promise.LayerLandlockTCP},
			promise.PromiseNetwork:         {promise.LayerLandlockTCP},
		},
	},
}

// Default is the mode of a run that names none.
const Default Name = "none"
