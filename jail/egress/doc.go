// Package egress is the supervisor's side of the egress network mode:
// a run whose network namespace is empty but for lo reaches the names
// its profile allows, on the ports allowed for each, through the
// supervisor, and nothing else; every lookup and connection is decided
// here and recorded.
//
// # The shape
//
// The run keeps its own empty network namespace, lo up, no route out.
// Its init makes, inside it, the sockets this package serves, and hands
// their descriptors to the supervisor, which serves them from the host's
// namespace (Sockets):
//
//   - a DNS stub, UDP on 127.0.0.1:53 (the view's resolv.conf names it).
//     It answers an A question for an allowed name with a fake address,
//     127.x.y.z in FakeRange; AAAA and HTTPS questions for an allowed name
//     with an empty NOERROR (so that clients go on to A at once); every
//     other question, name not allowed, malformed or too long name with
//     REFUSED. It never forwards a query: a name outside the profile
//     never reaches the host's resolver, and the resolver is not a channel
//     out (DNS tunnelling).
//   - a listener on 0.0.0.0:<port> for each allowed port. All of
//     127.0.0.0/8 is local on lo, so a client connecting to a fake
//     address lands on it with no route or interface to set up; the
//     accepted socket's local address is the fake address, which names
//     the destination. This is the path for clients that know nothing of
//     proxies (a C library, curl without a proxy, a JVM).
//   - an HTTP CONNECT proxy on 127.0.0.1:<port>, for HTTPS_PROXY: the
//     request line names the destination (a name; IP literals are
//     refused), and the refusal's words come back in the status line,
//     which clients print ("Tunnel connection failed: 403 scidex-jail
//     egress: evil.example is not in the profile").
//
// No socket path is in the run's view, and nothing of this package runs
// in the run's processes: what the analysis can touch is three sockets,
// whose other ends are this code.
//
// For each connection, captured or proxied, the supervisor checks the
// name and the port against the Policy, looks the name up itself (the
// Resolver: the host's by default), checks every address it got, and
// dials one of those very addresses, by address. No second lookup
// happens between the check and the dial, so DNS rebinding can change the
// next connection's decision but never send this one elsewhere; the
// dialled socket's peer is checked to be the address checked. An address
// is dialled only if it is public, or inside a range the profile names
// by CIDR: loopback, RFC 1918 private, CGNAT, link-local (the cloud
// metadata endpoint), multicast, broadcast, reserved, documentation and
// benchmarking ranges, 0.0.0.0/8, IPv6 unique-local, link- and
// site-local, and every IPv6 form that embeds an IPv4 address (mapped,
// compatible, NAT64, 6to4, Teredo) are refused, as is IPv6 outside
// 2000::/3. An answer that mixes a public address with such an address
// is refused whole: that mix is what a rebinding attack answers. TLS is
// not intercepted: bytes are copied, so certificates verify end to end
// and pinning keeps working.
//
// The database promise needs no new words: PostgreSQL's port 5432 can
// never be allowed (Parse refuses it), and the host's PostgreSQL is on a
// loopback or private address, refused at connect whatever a name
// resolves to.
//
// # What the peers do, and what this does better
//
// openai/codex (codex-rs/network-proxy, linux-sandbox) relays DNS for
// allowed names to the host's resolver and returns the real addresses,
// refusing an answer set holding a private address, then checks the
// address again at connect time; its transparent mode maps fake
// addresses to names. anthropic-experimental/sandbox-runtime runs a
// fake-IP DNS stub (198.18.0.0/15) and capture listeners inside the
// sandbox, as a helper process of the workload itself, and forwards
// captured connections over a unix socket bridge to a host proxy as
// CONNECT; it routes every address to lo with a `local default` route set
// up from outside. Here:
//
//   - Nothing runs in the workload and no bridge socket is in its view:
//     the init makes three sockets and hands them over; a workload that
//     kills or tampers with anything in its namespace loses its network,
//     never gains more.
//   - No route to set up: the fake addresses are loopback addresses, which
//     lo already delivers locally, and the listeners on 0.0.0.0 catch
//     them. A direct connection to any other address has no route at all
//     (ENETUNREACH): only the supervisor's sockets lead anywhere.
//   - The analysis never learns a real address, and the host's resolver is
//     asked only at connect time, by the supervisor, for names the policy
//     allows: a lookup the analysis makes costs nothing outside, and a
//     name it only asks about never leaves the host.
//   - The address check is the dial: one lookup per connection, every
//     address of it checked, the dial to the checked address, the socket's
//     peer held to it. codex checks the resolved address at connect time
//     too; its list of ranges (and sandbox-runtime's) misses NAT64, 6to4
//     and Teredo, through which an IPv6 address reaches an IPv4 one.
//   - Fake addresses are a hash of the name (stable across runs, so
//     reports compare), never reused for another name within a run (a
//     client that kept an address cannot reach another name through it,
//     the failure sandbox-runtime's comment records from Clash).
//   - Budgets (connections, connections open at once, lookups, names,
//     bytes each way, time per connection) and a bounded log, with exact
//     totals and a summary sentence, are part of the engine, not an
//     add-on; the supervisor's own work is bounded with the run's.
//
// # Names
//
// A host entry is a name ("eutils.ncbi.nlm.nih.gov"), or every name
// under a domain ("*.uniprot.org": rest.uniprot.org and a.b.uniprot.org,
// not uniprot.org, which is an entry of its own), on port 443 unless it
// names one ("files.rcsb.org:80"); one port per entry, entries merge.
// Parse refuses, with an *EntryError saying how to write it: a bare *, a
// wildcard over a top-level domain (*.org), a * anywhere but the whole
// first label, an IP address (a range is named by CIDR instead, and only
// widens where allowed names may resolve: the analysis still reaches
// names, never addresses), port 0 and PostgreSQL's 5432, and anything
// that is not a host name. Names are compared lower-cased, without a
// trailing dot; a name written in Unicode is mapped to its ASCII form
// (IDNA2008's lookup rules: bücher.example is xn--bcher-kva.example),
// since that is what clients look up. From the analysis (the stub's
// questions, CONNECT lines) only ASCII names are read: labels of letters,
// digits, hyphens and underscores, at most 63 bytes each and 253 in all,
// the last not all digits (a resolver may read 127.1 as an address).
//
// What clients see: an allowed name works as on any network. A refused
// lookup is REFUSED, which the C library reports as "Temporary failure in
// name resolution" (EAI_AGAIN) and curl as "Could not resolve host"; a
// refused CONNECT is a 403 whose status line carries the reason, which
// Python prints whole ("Tunnel connection failed: 403 scidex-jail egress:
// evil.example is not in the profile"); a refused captured connection is
// reset. The report's notes (Log.Summary) name every refusal either way.
//
// # Budgets and the log
//
// Budgets bound a run: connections (open at once, counted from the accept,
// and in the whole run), lookups and distinct names, bytes each way, time
// per connection. Past the run's connections or lookups, the listeners or
// the stub's socket close and the kernel refuses what follows, so that an
// analysis cannot spend the supervisor's CPU, which its cgroup does not
// bound. Bytes are counted per run each way (what must be
// bounded is what the run as a whole sends out and pulls in; a
// per-connection budget is evaded by opening another connection), taken
// in chunks before they are copied, so no byte past a budget is relayed.
// Over a budget the connection is closed, and its entry says Cut and
// which budget. The Log keeps each distinct lookup once, with a count, and
// each connection (name, port, how it came, address dialled, decision,
// reason, bytes each way, duration), up to Budgets.Entries entries;
// beyond that entries are counted, not kept, and Totals stay exact.
// Log.Summary is the sentence for a run's completion notes.
//
// # What it does not stop
//
// Data sent to a name the profile allows: an analysis may send anything
// to eutils.ncbi.nlm.nih.gov that NCBI accepts, in a query string or a
// POST body, within the upload budget. Nor, for a wildcard entry, the
// names under it: a lookup the supervisor makes for data-in-a-label
// .uniprot.org reaches uniprot.org's name servers (a channel to the
// same operator the profile already trusts with HTTPS). The engine never
// reads or changes what it relays, so it cannot tell a query from a leak.
// A wildcard over a public suffix (*.co.uk) is not recognised as one.
// UDP other than the stub, and connections to addresses other than the
// fake ones, have no way out of the namespace: that is the namespace's
// doing, which the wiring sets up (jail/netmode's egress row, the init's
// sockets.go, jail/supervise's hook.go), not this package's.
//
// # Usage
//
// As Example (compiled with the tests):
//
//	policy, err := egress.Parse([]string{"eutils.ncbi.nlm.nih.gov", "*.uniprot.org"}, nil)
//	if err != nil {
//		return err // host entry "*": a bare * would allow every host; ...
//	}
//	eng, err := egress.New(egress.Config{Policy: policy})
//	if err != nil {
//		return err
//	}
//	// dns, ports and proxy: made by the init in the run's namespace
//	if err := eng.Serve(ctx, egress.Sockets{DNS: dns, Ports: ports, Proxy: proxy}); err != nil {
//		return err
//	}
//	// ... the run ...
//	log := eng.Stop()
//	notes = append(notes, log.Summary())
//
// Kernel: any Linux; the engine itself needs no privilege. Its sockets are
// made where the wiring decides.
package egress
