package limits

// Origin says where a run's limit values came from, so that a message
// names what the user wrote: the flag (--disk) for a value given on the
// command line, the profile field's path (profiles.gpu.disk) for one that
// came from a profile. The zero Origin names flags throughout: a run built
// by a program has no profiles file to point at.
type Origin struct {
	profile string
	flags   uint64 // bit i: All[i] was given as a flag
}

// FromProfile is the origin of a profile's values.
func FromProfile(name string) Origin { return Origin{profile: name} }

// WithFlag is o with l's value given as a flag.
func (o Origin) WithFlag(l *Limit) Origin {
	o.flags |= 1 << index(l)
	return o
}

// Flag reports whether l's value was given as a flag.
func (o Origin) Flag(l *Limit) bool { return o.profile == "" || o.flags&(1<<index(l)) != 0 }

// Name is what the user wrote to give l's value: --disk, or
// profiles.gpu.disk.
func (o Origin) Name(l *Limit) string {
	if o.Flag(l) {
		return "--" + l.Flag
	}
	return "profiles." + o.profile + "." + l.Field
}

// index is l's place in All; a row outside All is a bug.
func index(l *Limit) uint {
	for i, r := range All {
		if r == l {
			return uint(i)
		}
	}
	panic("limits: a row outside the table: " + l.Name)
}
