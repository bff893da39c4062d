package server

import (
	"sync"
	"time"

	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/supervise"
)

// PoolConfig says which slots are kept ready.
type PoolConfig struct {
	// Templates are the runs slots are made for, one per slot profile
	// (a request naming the profile and the server's slot settings): a
	// slot is made for each (supervise.PrepareSlot, its spec resolved anew
	// each time) and serves a run whose plan has its key.
	Templates   []request.Request
	PerTemplate int           // slots kept ready of each
	Idle        time.Duration // a slot unused this long is made anew
	// Warn gets what went wrong making a slot (the server's stderr).
	Warn func(string)
}

// pool keeps slots ready, made one at a time and only while busy says no
// (a run place is free, and no run is at its start or its end), so that
// making them competes neither with running analyses nor with a run's
// way in and out. The server asks for a refill at the end of each run,
// and beside a run whose target has run longRun.
type pool struct {
	cfg  PoolConfig
	busy func() bool

	mu     sync.Mutex
	ready  [][]*supervise.Slot // by template
	closed bool
	wake   chan struct{}
	done   chan struct{}

	// After a slot could not be made: no other try before retryAt, the
	// wait doubling up to maxBackoff, and a warning only when the reason
	// changes (a host that cannot hold slots says so once, not every
	// second). Only the refill goroutine uses them.
	backoff  time.Duration
	retryAt  time.Time
	lastWarn string

	// gen counts each template's changes (follow.go): a slot made from
	// one before the last change is of the old shape.
	gen []int
}

// maxBackoff bounds the wait between tries to make a slot that failed.
const maxBackoff = 5 * time.Minute

func newPool(cfg PoolConfig, busy func() bool) *pool {
	p := &pool{cfg: cfg, busy: busy, ready: make([][]*supervise.Slot, len(cfg.Templates)),
		wake: make(chan struct{}, 1), done: make(chan struct{}), gen: make([]int, len(cfg.Templates))}
	go p.refill()
	p.kick()
	return p
}

// kick asks the refill loop to look again.
func (p *pool) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// take hands out a ready slot of key, or nil; it is the taker's from then.
func (p *pool) take(key supervise.SlotKey) *supervise.Slot {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, slots := range p.ready {
		for j, sl := range slots {
			if sl.Key() == key {
				p.ready[i] = append(slots[:j:j], slots[j+1:]...)
				return sl
			}
		}
	}
	return nil
}

// refill makes what is missing, one slot at a time, and recycles slots
// idle too long, until close.
func (p *pool) refill() {
	defer close(p.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-p.wake:
		case <-tick.C:
		}
		if !p.refillOnce() {
			return
		}
	}
}

// refillOnce recycles idle slots and fills the pool while no run waits for
// a place; false once the pool is closed.
func (p *pool) refillOnce() bool {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return false
		}
		stale := p.takeStale(currentInit())
		p.mu.Unlock()
		stale = append(stale, p.takeNotCurrent()...)
		p.mu.Lock()
		i := p.missing()
		var template request.Request
		var gen int
		if i >= 0 {
			template, gen = p.cfg.Templates[i], p.gen[i] // follow may change it meanwhile
		}
		p.mu.Unlock()
		for _, sl := range stale {
			sl.Destroy()
		}
		if i < 0 || p.busy() || time.Now().Before(p.retryAt) {
			return true
		}
		sl, err := prepare(&template)
		if err != nil {
			p.failed("slot for profile " + template.Profile + ": " + err.Error() + "; runs start cold")
			return true
		}
		p.backoff, p.lastWarn = 0, ""
		p.mu.Lock()
		if p.closed || p.gen[i] != gen {
			closed := p.closed
			p.mu.Unlock()
			sl.Destroy() // the pool's end, or a slot of the old shape
			if closed {
				return false
			}
			continue
		}
		p.ready[i] = append(p.ready[i], sl)
		p.mu.Unlock()
	}
}

// prepare makes a slot for the run t.
func prepare(t *request.Request) (*supervise.Slot, error) {
	s, err := t.Resolve(option.Flag) // the server's own settings: its flags
	if err != nil {
		return nil, err
	}
	return supervise.PrepareSlot(s)
}

// failed puts the next try off, twice as long as the last (1 s first),
// and warns when the reason is new.
func (p *pool) failed(why string) {
	p.backoff = min(max(2*p.backoff, time.Second), maxBackoff)
	p.retryAt = time.Now().Add(p.backoff)
	if why != p.lastWarn && p.cfg.Warn != nil {
		p.cfg.Warn(why)
	}
	p.lastWarn = why
}

// missing is a template short of slots, or -1.
func (p *pool) missing() int {
	for i, slots := range p.ready {
		if len(slots) < p.cfg.PerTemplate {
			return i
		}
	}
	return -1
}

// currentInit is the init program's identity now, "" when it cannot be
// read (then the slots are kept: a run reports the missing init).
func currentInit() string {
	id, err := supervise.InitIdentity()
	if err != nil {
		return ""
	}
	return id
}

// takeStale removes the slots idle longer than Idle, and those made from
// another init than the one there now (a new package). Those whose view
// is no longer the host's are dropNotCurrent's.
func (p *pool) takeStale(init string) []*supervise.Slot {
	var stale []*supervise.Slot
	for i, slots := range p.ready {
		kept := slots[:0]
		for _, sl := range slots {
			if (p.cfg.Idle > 0 && time.Since(sl.Made()) > p.cfg.Idle) || (init != "" && !sl.MadeFrom(init)) {
				stale = append(stale, sl)
			} else {
				kept = append(kept, sl)
			}
		}
		p.ready[i] = kept
	}
	return stale
}

// close stops the refill and destroys every ready slot.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	var all []*supervise.Slot
	for i, slots := range p.ready {
		all = append(all, slots...)
		p.ready[i] = nil
	}
	p.mu.Unlock()
	p.kick()
	<-p.done
	for _, sl := range all {
		sl.Destroy()
	}
}
