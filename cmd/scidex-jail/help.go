package main

import "github.com/alecthomas/kong"

// The help of run's flags is kept out of their struct tags, in flagHelp
// methods beside the structs, and given to kong's model only where it is
// read: by the help printer (parse) and by man and completion, which print
// the whole model. Kong reads every byte of every tag of the grammar and
// interpolates every help text at every start, and run's help texts were
// most of its tags' bytes: about 4% of a run's CPU (docs/performance.md).
// The help printed is the same, from the same strings.

// flagHelper is a command whose flags' help (by flag name, with that of
// the flags it embeds) is not in their tags.
type flagHelper interface{ flagHelp() map[string]string }

// withHelp gives the flags and arguments of n and of every command below
// it the help their command keeps out of their tags.
func withHelp(n *kong.Node) {
	if n.Target.CanAddr() {
		if c, ok := n.Target.Addr().Interface().(flagHelper); ok {
			help := c.flagHelp()
			for _, f := range n.Flags {
				if h, ok := help[f.Name]; ok {
					f.Help, f.OrigHelp = h, h
				}
			}
			for _, p := range n.Positional {
				if h, ok := help[p.Name]; ok {
					p.Help, p.OrigHelp = h, h
				}
			}
		}
	}
	for _, c := range n.Children {
		withHelp(c)
	}
}
