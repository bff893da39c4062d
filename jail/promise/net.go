package promise

// Network is what a run's network mode gives the promises that depend on
// the network ([NetPromises]): the layers that can hold each, and what the
// network promise means in the mode. Each row of the table of network
// modes (jail/netmode) holds one; this package knows no mode by name.
type Network struct {
	Mode   string              // the mode's name, as the network promise's text gives it
	Means  string              // what the network promise means in it: "no network"
	Layers map[Promise][]Layer // by promise of NetPromises
}

// NetPromises are the promises whose layers the network mode decides:
// a [Network] gives layers for each.
func NetPromises() []Promise {
	var out []Promise
	for _, d := range promiseTable {
		if d.byNet {
			out = append(out, d.promise)
		}
	}
	return out
}

// what is the network promise's text in this mode: "the network mode
// holds (none: no network)".
func (n Network) what(base string) string {
	if n.Mode == "" {
		return base
	}
	return base + " (" + n.Mode + ": " + n.Means + ")"
}
