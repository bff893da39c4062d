// Package option is the table of a run's options that are not limits
// (jail/limits holds those): the analysis ID and command, the profile,
// the paths (the root, its data directories, inputs, read-only and
// read-write paths, the destinations), the environment, the network and
// its ports, the ids, and the protections given up by name. Each row is
// named in every language a user writes a value in ([Names]): the command
// line's flag (--ro), the profiles file's field (read_only), a request's
// field (read_only) and the Python package's keyword (ro). The flags'
// help, `scidex-jail profiles --schema`, the profile fields the parser
// knows and the Python keywords (held by a test) follow the rows.
//
// An [Origin] says where each value of a run came from, so that every
// message about a value names what the user wrote, in the words of where
// they wrote it: a profile's read_only path that does not exist is
// profiles.z.read_only, the same path given on the command line --ro, in
// a request request field read_only. The package imports nothing of the
// jail, so that every package may name its options through it; this file
// and origin.go are the only place a flag's dashes are written.
//
//	o := option.FromProfile("z", option.Flag).Added(option.ReadOnly, 1, option.ReadOnly)
//	o.NameAt(option.ReadOnly, 0) // profiles.z.read_only: the profile's path
//	o.NameAt(option.ReadOnly, 1) // --ro: a path given over it
//	option.Origin{}.Name(option.TmpRoot) // --tmp-root: a program's Spec
package option
