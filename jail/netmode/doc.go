// Package netmode is the one table of the run's network modes: none,
// loopback, host and egress, one row each ([All]). A row holds everything
// the jail does differently in a mode: whether the run gets a network namespace of
// its own and lo up in it, the seccomp filter's network policy (a value of
// the seccomp package, which knows no mode), whether Landlock's TCP rules
// apply (and so whether the mode takes allowed TCP ports), the layers that
// hold the promises that depend on the network (a promise.Network), what
// the host view looks at (the resolver), the environment it adds, and the
// supervisor's side of a mode that needs one ([Hook]).
//
// A run's spec, a profile and a request carry a mode's [Name]; the row is
// looked up where it is used ([Lookup]), and nothing outside this package
// switches on a name: the plan (namespaces, init config, Landlock and
// seccomp policies, promises), the host view, the spec's and the profile's
// validation (one rule: [Lookup] and [Mode.CheckPorts], in the words of
// where the user wrote the value), the --net flag's help ([Help]),
// `profiles --schema` (and through it the Python package's net keyword),
// and docs/security.md's table ([MarkdownTable], held by a test) read the
// rows.
//
// # Adding a mode
//
// A new mode is a row of [All] and its line in docs/security.md. A test
// of the command line (TestHypotheticalNetMode) adds a row and follows it
// to the flag, the profile field, the schema, the plan and the promises.
// A mode that needs work of the supervisor's own (a DNS stub, a proxy
// outside the run's namespace) sets [Mode.Hook] (hook.go: its contract);
// the egress row's is jail/egress's engine (egress.go), the none row's
// its name service (names.go).
//
// # Use
//
//	mode, err := netmode.Lookup(spec.Net) // err: an *UnknownError naming the choices
//	if pe := mode.CheckPorts(spec.AllowTCP); pe != nil {
//		return fmt.Errorf("--allow-tcp %s", pe.Needs("--net"))
//	}
//	layers := promise.HostLayers{LandlockABI: abi, Net: mode.Network()}
//
// The package imports only the promise and seccomp value types and
// jail/egress (the egress row's hook; a leaf itself), so that the planning
// package, the command line and the profiles may all read it.
package netmode
