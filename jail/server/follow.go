package server

import (
	"slices"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// taker is a run's supervise.Options.Slots, and whether the run found
// slots ready but none of its key (missed): a run that starts cold
// because the pool was empty (runs back to back) is no other shape, and
// follow's plans are not spent on it.
func (p *pool) taker() (supervise.Slots, *bool) {
	missed := new(bool)
	return func(key string) *supervise.Slot {
		sl := p.take(key)
		if sl == nil {
			p.mu.Lock()
			for _, slots := range p.ready {
				*missed = *missed || len(slots) > 0
			}
			p.mu.Unlock()
		}
		return sl
	}, missed
}

// follow makes the pool's next slots of run's profile in run's shape
// (supervise.SlotShape), when run started cold with slots of another key
// ready (taker): a slot's view is built
// ahead, so it serves only runs of its shape, and the runs a server gets
// back to back are mostly of one (a platform's analyses of one root, a
// benchmark). The slots ready of the old shape are destroyed. Nothing
// changes when run's shape is the template's (the slots were all taken),
// or run is of another profile than the slots'.
func (p *pool) follow(run *jail.Spec) {
	if p.cfg.PerTemplate <= 0 {
		return // no slots: nothing to shape (and two plans saved)
	}
	p.mu.Lock()
	i := -1
	for j, t := range p.cfg.Templates {
		if t.Profile == run.Profile {
			i = j
			break
		}
	}
	if i < 0 || p.closed {
		p.mu.Unlock()
		return
	}
	old := p.cfg.Templates[i]
	p.mu.Unlock()
	shape := supervise.SlotShape(old, run)
	if supervise.SameShape(old, shape) {
		return
	}
	p.mu.Lock()
	if p.cfg.Templates[i] == old {
		// A copy: the slice is the server's Config's.
		t := slices.Clone(p.cfg.Templates)
		t[i] = shape // takeStale destroys the slots of old
		p.cfg.Templates = t
	}
	p.mu.Unlock()
	p.kick()
}
