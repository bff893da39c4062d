package supervise

import (
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/egress"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/report"
)

// egressReport is the report's egress section from the hook's log: the
// egress mode's always, another mode's (none's name lookups) when it
// recorded something; nil when the run had no hook or it never started.
func egressReport(p *jail.Plan, log *egress.Log) *report.Egress {
	if log == nil || p.Hook == nil {
		return nil
	}
	// A mode that takes hosts reports its policy even when nothing was
	// asked; another only what it recorded.
	if m, _ := netmode.Lookup(netmode.Name(p.Enforced.Net)); !m.Hosts && log.Totals.Lookups == 0 && log.Totals.Conns == 0 {
		return nil
	}
	e := &report.Egress{Hosts: []string{}, Ranges: []string{}, Lookups: []report.EgressLookup{}, Connections: []report.EgressConn{}, Dropped: log.Dropped}
	for _, h := range p.Hook.Run.Policy.Hosts {
		e.Hosts = append(e.Hosts, h.String())
	}
	for _, r := range p.Hook.Run.Policy.Ranges {
		e.Ranges = append(e.Ranges, r.String())
	}
	for _, l := range log.Lookups {
		e.Lookups = append(e.Lookups, report.EgressLookup{Name: l.Name, Type: l.Type, Decision: string(l.Decision), Answer: l.Answer,
			Reason: string(l.Reason), Detail: l.Detail, Count: l.Count})
	}
	for _, c := range log.Conns {
		e.Connections = append(e.Connections, report.EgressConn{Name: c.Name, Port: int(c.Port), Via: string(c.Via), Dialled: c.Dialled,
			Decision: string(c.Decision), Reason: string(c.Reason), Detail: c.Detail, BytesUp: c.Up, BytesDown: c.Down,
			DurationSeconds: c.Duration.Seconds()})
	}
	t := log.Totals
	e.Totals = report.EgressTotals{Lookups: t.Lookups, LookupsRefused: t.LookupsRefused, Connections: t.Conns, Allowed: t.ConnsAllowed,
		Refused: t.ConnsRefused, Failed: t.ConnsFailed, Cut: t.ConnsCut, BytesUp: t.Up, BytesDown: t.Down}
	return e
}
