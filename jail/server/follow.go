package server

import (
	"slices"

	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// taker is a run's supervise.Options.Slots, and whether the run found
// slots ready but none of its key (missed): a run that starts cold
// because the pool was empty (runs back to back) is no other shape, and
// follow's plans are not spent on it.
func (p *pool) taker() (supervise.Slots, *bool) {
	missed := new(bool)
	return func(key supervise.SlotKey) *supervise.Slot {
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
// (slotShape), when run started cold with slots of another key ready
// (taker): a slot's view is built ahead, so it serves only runs of its
// shape, and the runs a server gets back to back are mostly of one (a
// platform's analyses of one root, a benchmark). The slots ready of the
// old shape are destroyed, and those being made are when they are done
// (refillOnce, by the template's generation). Nothing changes when run's
// shape is the template's, or run is of another profile than the slots'.
func (p *pool) follow(run *request.Request) {
	if p.cfg.PerTemplate <= 0 {
		return // no slots: nothing to shape (and two plans saved)
	}
	profile := func(r request.Request) string {
		if r.Profile == "" {
			return request.DefaultProfile
		}
		return r.Profile
	}
	p.mu.Lock()
	i := -1
	for j, t := range p.cfg.Templates {
		if profile(t) == profile(*run) {
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
	shape := slotShape(old, *run)
	a, err := old.Resolve(option.Flag)
	if err != nil {
		return
	}
	b, err := shape.Resolve(option.Flag)
	if err != nil || supervise.SameShape(a, b) {
		return
	}
	p.mu.Lock()
	var stale []*supervise.Slot
	if p.gen[i]++; !p.closed {
		// A copy: the slice is the server's Config's.
		t := slices.Clone(p.cfg.Templates)
		t[i] = shape
		p.cfg.Templates = t
		stale, p.ready[i] = p.ready[i], nil
	}
	p.mu.Unlock()
	for _, sl := range stale {
		sl.Destroy()
	}
	p.kick()
}

// analysisStarted says whether rep's analysis started: its supervisor
// phase "init" (from "go" to the target's start) is there only once the
// init reported the start. Only such a run's shape is followed: a run the
// kernel refused before its target ran (a Landlock ruleset over /etc, a
// seccomp filter it will not load) fails in every slot of its shape too,
// so following it left the pool remaking slots that always fail, and
// every run after it cold.
func analysisStarted(rep *report.Report) bool {
	return slices.ContainsFunc(rep.Phases, func(p report.Phase) bool {
		return p.Name == "init" && p.Where == "supervisor"
	})
}

// slotShape is a template for slots of run's shape: run as a slot of
// template's would be asked for (template's ID, which names the slots'
// leaves, its command, its server's settings: ids, cgroup parent, what it
// disables), without what only the run has (its report, its collection,
// the run directory kept).
func slotShape(template, run request.Request) request.Request {
	s := run
	s.ID, s.Command = template.ID, template.Command
	s.UID, s.GID, s.UIDRange, s.CgroupParent = template.UID, template.GID, template.UIDRange, template.CgroupParent
	s.UnsafeDisable, s.AllowDegraded = template.UnsafeDisable, template.AllowDegraded
	s.Report, s.Collect, s.CollectMerge, s.Keep = "", "", false, false
	return s
}

// takeNotCurrent removes the ready slots whose view is no longer the
// host's (supervise.Slot.Current: a plan of the host, at most once a
// second a slot), looked at outside the lock, so that no run's take
// waits behind it; a slot taken meanwhile is the run's.
func (p *pool) takeNotCurrent() []*supervise.Slot {
	p.mu.Lock()
	var all []*supervise.Slot
	for _, slots := range p.ready {
		all = append(all, slots...)
	}
	p.mu.Unlock()
	var gone []*supervise.Slot
	for _, sl := range all {
		if !sl.Current() {
			gone = append(gone, sl)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var taken []*supervise.Slot
	for i, slots := range p.ready {
		p.ready[i] = slices.DeleteFunc(slots, func(sl *supervise.Slot) bool {
			if slices.Contains(gone, sl) {
				taken = append(taken, sl)
				return true
			}
			return false
		})
	}
	return taken
}
