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
		Doc:          "no network: inet, inet6 and netlink sockets are refused (EAFNOSUPPORT); the C library's name lookups are answered, refused, and recorded by the supervisor over a unix socket of the view (its name service's, /var/run/nscd/socket), so the notes name what the analysis tried to reach",
		OwnNamespace: true, Seccomp: seccomp.NetNone,
		// Its name lookups are answered, refused, by the supervisor over a
		// unix socket (names.go), and named in the notes.
		Hook: namesHook{why: "this profile allows no network"},
		Layers: map[promise.Promise][]promise.Layer{
			promise.PromiseAbstractSockets: {promise.LayerNetNS, promise.LayerLandlockScope},
			promise.PromiseNoPostgres:      {promise.LayerNetNS, promise.LayerSeccomp},
			promise.PromiseNetwork:         {promise.LayerNetNS, promise.LayerSeccomp},
		},
	},
	{
		Name: "loopback", Help: "lo only, e.g. for notebook kernels", Means: "the run's own only",
		Doc:          "inet sockets reach the run's own listeners only (notebook kernels); name lookups are answered, refused, and recorded as in none",
		OwnNamespace: true, Loopback: true, Seccomp: seccomp.NetInet,
		Hook: namesHook{why: "this profile allows no network but the run's own loopback"},
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
	{
		Name: "egress", Help: "only the allowed hosts, by name, through the supervisor's DNS stub and proxy",
		Means: "the allowed hosts only, by name, through the supervisor",
		Doc: "the allowed hosts only, by name, on their ports: the run's own namespace, `lo` up and nothing routed out; " +
			"a DNS stub (127.0.0.1:53) answers allowed names with fake loopback addresses and refuses the rest; connections to those " +
			"(or a CONNECT to the HTTPS proxy in HTTPS_PROXY) reach the supervisor, which resolves the name itself and dials only public " +
			"addresses (or ranges the profile names), never PostgreSQL's port; UDP but the stub's has no way out (nothing routes out); " +
			"every lookup and connection is in the report's `egress`",
		OwnNamespace: true, Loopback: true, Seccomp: seccomp.NetInet, Hosts: true,
		// Its namespace holds the network: it has no route out, and the
		// supervisor's sockets in it are the only way, which decides by
		// name, port and address (jail/egress). UDP needs no layer of
		// its own: nothing routes out, so a datagram to any address but
		// the stub's fails (ENETUNREACH).
		Layers: map[promise.Promise][]promise.Layer{
			promise.PromiseAbstractSockets: {promise.LayerNetNS, promise.LayerLandlockScope},
			promise.PromiseNoPostgres:      {promise.LayerNetNS},
			promise.PromiseNetwork:         {promise.LayerNetNS},
		},
		Hook: egressHook{},
	},
}

// Default is the mode of a run that names none.
const Default Name = "none"
