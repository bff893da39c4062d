// Package profile is the run's profiles: text in, a jail.Spec out. A
// profile is a named set of limits and permissions (the built-ins:
// default, notebook, post_process, tool); the profiles file
// (/etc/scidex-jail/profiles.json, or --config) overrides a built-in field
// by field or adds a profile on a base. Every limit's field is read and
// checked by its row of jail/limits' table, so a profile field and a flag
// follow one rule; every other field is a row of jail/option's. An error
// names the field's path (profiles.<name>.<field>, Profile.Origin), and
// the Spec a profile makes says the values are the profile's
// (Spec.From), so that what is refused only when a run starts (a
// read_only path that does not exist) is named by its field too.
//
// Usage (the package's Example, compiled with its tests):
//
//	ps, path, err := profile.LoadProfiles(config) // "" = the default file, if it exists
//	p, ok := ps[name]
//	spec := p.Spec() // then the run's own fields: ID, command, tmp-root, ...
//
// The file is read with a bound (MaxProfilesFileSize), opened without
// blocking and checked to be a regular file on the open descriptor: the
// jail runs as root, and a path to a FIFO or /dev/zero must not hang or
// exhaust it. Nothing here needs root or touches the kernel beyond that
// read.
package profile
