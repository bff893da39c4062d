// Package limits is the one table of the run's limits: for each of them
// (timeout, grace, memory, swap, cpus, pids, disk, shm and the four output
// budgets) its name, its kind (a size, a duration, a count, CPUs), whether
// the word none switches it off, what a 0 means, its bounds with their
// reasons, and the names it goes by: the command line's flag, the
// profiles file's field, the report's field. Everything else reads the
// table: the flags (cmd/scidex-jail), the profile fields and their checks
// (jail), the report's limits.none, `scidex-jail profiles --schema` (which
// the Python package validates from) and the README's limits table (held
// by a golden test).
//
// # The rule
//
// One rule for every limit, on the command line and in profiles alike:
//
//   - the word none switches a limit off, where the row allows it
//     ([Limit.None]); a switched-off limit is stored as 0;
//   - a 0 written out means none for timeout, memory and disk ([ZeroIsNone]),
//     is refused for cpus, pids, shm and the output budgets ([ZeroRefused]:
//     a zero there is a typo or a value that slipped through a template, and
//     the PID limit is what stops a fork bomb, so switching it off must be
//     written out as none), and is an amount for swap and grace
//     ([ZeroIsAmount]: no swap, SIGKILL at once);
//   - a value outside [Limit.Min] and [Limit.Max] is refused with the
//     bound's reason.
//
// # Use
//
// Text (a flag, a profile field) is read with [Limit.Parse]; a value that
// arrives typed (a Spec built by a library caller, a built-in profile) is
// checked with [Limit.Check]. Both return messages that start with the
// value, so that the caller puts the name the user wrote in front of them:
// the flag (--cpus) or the profile field's path (profiles.gpu.cpus).
//
//	a, err := limits.CPUQuota.Parse("0.5")   // a.Float() == 0.5
//	_, err = limits.PIDs.Parse("0")      // "0 processes is refused: ..."
//	err = limits.PIDs.Check(limits.Int(int64(99999999999))) // "99999999999 is above ..."
//
// # Adding a limit
//
// Adding a limit is a row here, and for a limit the cgroup leaf holds, a
// row of cgroupfs's list of controllers that declares the key the row names
// ([Limit.Cgroup]). A run's spec and a profile store the table's values
// by row ([Values]), so no struct has a field per limit; the flag, the
// profile field and its printed form, the checks, the report's field
// (written at [Limit.Report]), `profiles --schema`, the Python keyword
// (read from that schema), the report's JSON Schema ([ReportSchema], held
// by a test that writes it with `go test ./jail/report -run TestLimitsInSchema
// -update-schema`), the README's row (paste [MarkdownTable], which its
// test prints) and a row of docs/deploying.md's profile fields follow
// from the row. A row added within the report's
// schema version sets [Limit.ReportOptional]. What the limit does beyond
// its cgroup file (a supervisor's clock, a tmpfs size) is code of its own.
//
// The package is a leaf: it imports only the standard library, so the
// command line, jail and the tests may all read it.
package limits
