package supervise

import (
	"context"
	"strings"

	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/netmode"
)

// The network mode's supervisor-side work (netmode.Hook: the egress
// mode's engine, the none mode's name service): started before the init
// (startHook), serving the sockets the init hands over in its setup,
// before the analysis runs (serveHook, from the event loop), and stopped
// when the run is over, before its cleanup and its report (stopHook, from
// finish). Its notes go into the completion notes and its log into the
// report's egress (assemble.go, egress_report.go).

// startHook starts the plan's hook, if it has one. A hook that cannot
// start is the run's setup failure: a mode without its own side is not
// the mode (fail closed).
func (sv *supervisor) startHook() *setupFailure {
	hp := sv.plan.Hook
	if hp == nil {
		return nil
	}
	s, err := hp.Hook.Start(context.Background(), hp.Run)
	if err != nil {
		return failAt(protocol.StagePolicy, err)
	}
	sv.hook = s
	return nil
}

// serveHook hands the init's sockets to the hook. Sockets nobody asked
// for, or that the hook cannot take, are closed: the run goes on with no
// way out, and a warning says why.
func (sv *supervisor) serveHook(m *protocol.SocketsMade) {
	if sv.hook == nil {
		initconn.CloseSockets(m)
		sv.warnings = append(sv.warnings, "the init handed over sockets no network mode asked for: closed")
		return
	}
	files := m.Files
	m.Files = nil
	if err := sv.hook.Serve(files); err != nil {
		sv.warnings = append(sv.warnings, "the network mode's sockets could not be served, the run had no way out: "+err.Error())
	}
}

// stopHook stops the hook, if one started: nothing of it runs after.
func (sv *supervisor) stopHook() netmode.Stopped {
	if sv.hook == nil {
		return netmode.Stopped{}
	}
	st := sv.hook.Stop()
	sv.hook = nil
	return st
}

// hookNotes is the hook's notes as one sentence for completion_notes.
func hookNotes(st netmode.Stopped) string { return strings.Join(st.Notes, " ") }
