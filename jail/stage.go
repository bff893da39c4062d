package jail

import "github.com/scidex/scidex-jail/jail/internal/protocol"

// Stage is where a run failed before the analysis ran: a report's
// report.SetupError.Stage, and a *PlanError's. The list is closed and documented,
// one line a stage, in package jail/internal/protocol, which the
// supervisor and the init share; Stages returns it.
type Stage = protocol.Stage

// Stages returns every stage a run can report, in the order of the
// README's troubleshooting table (the order a run meets them, the init's
// own death last).
func Stages() []Stage { return protocol.Stages() }
