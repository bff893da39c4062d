// Package promise is the jail's contract as data: the promises a run makes
// (no write outside the run directory, no read outside the allowed trees,
// nothing reaching outside the run, no PostgreSQL, limits enforced,
// nothing left behind, ...), the layers that can hold each one (the mount
// view, Landlock's rights, the namespaces, seccomp, the cgroup), and the
// protections a caller may give up only by name (OptIn: to degrade, a
// profile's allow_degraded, or to disable).
//
// Fail closed per promise: EvaluatePromises says which layers hold each
// promise on a host (HostLayers: the kernel's Landlock ABI, what was
// switched off, and what the network mode's row gives the promises that
// depend on the network: Network); Check refuses a run where a promise
// holds with fewer layers than it requires, unless each missing layer was
// given up by an opt-in, and returns the promises that run degraded so the
// report can say so. Everything here is pure: no kernel, no files.
//
// Usage (the package's Example runs it on a host without Landlock):
//
//	ins, err := promise.ParseOptIns(promise.OptInDegrade, allowDegraded) // once, where they are read
//	states := promise.EvaluatePromises(promise.HostLayers{LandlockABI: abi, Net: mode.Network(), Disabled: ins.Disabled()}, required)
//	degraded, err := promise.Check(states, ins) // err: a *PromiseError naming the promise, the missing layer and the fix
//	report := promise.Report(states)             // the report's enforced.promises
package promise
