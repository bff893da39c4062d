package egress

import (
	"sync/atomic"
	"time"
)

// Budgets bound what a run's egress may cost. Bytes are counted per run,
// each way, rather than per connection: what must be bounded is what the
// run as a whole may send out (an exfiltration's size, even to an allowed
// name) and pull in (the host's bandwidth), and a per-connection budget
// is evaded by opening another connection. A zero field takes its
// default; there is no "unlimited".
type Budgets struct {
	Connections int           // connections decided on in the run, allowed or refused
	Open        int           // connections open at once
	Up          int64         // bytes from the analysis out, the whole run
	Down        int64         // bytes in to the analysis, the whole run
	ConnTime    time.Duration // how long one connection may stay open
	Names       int           // distinct names the DNS stub gives addresses to
	Lookups     int           // questions the DNS stub answers in the run
	Entries     int           // log entries kept (lookups and connections)
}

// DefaultBudgets are sized for an analysis calling a few scientific APIs
// over a long run: a thousand requests that each open a connection (and
// look their name up, twice: A and AAAA, with room for clients that do
// not cache), a few GiB of downloads, 256 MiB of uploads (queries, not
// datasets), and a connection held open for up to 15 minutes (a large
// download). Entries matches the report's output-entries budget's order
// of magnitude.
//
// The supervisor's own work is bounded too, since it is not in the run's
// cgroup: once the run's connections or lookups are spent, the listeners
// or the stub's socket close, and the kernel refuses what follows (a
// connection refused, a port unreachable) at no cost to the supervisor.
var DefaultBudgets = Budgets{
	Connections: 1024,
	Open:        64,
	Up:          256 << 20,
	Down:        4 << 30,
	ConnTime:    15 * time.Minute,
	Names:       1024,
	Lookups:     100000,
	Entries:     1000,
}

// withDefaults fills b's zero fields from DefaultBudgets.
func (b Budgets) withDefaults() Budgets {
	d := DefaultBudgets
	if b.Connections <= 0 {
		b.Connections = d.Connections
	}
	if b.Open <= 0 {
		b.Open = d.Open
	}
	if b.Up <= 0 {
		b.Up = d.Up
	}
	if b.Down <= 0 {
		b.Down = d.Down
	}
	if b.ConnTime <= 0 {
		b.ConnTime = d.ConnTime
	}
	if b.Names <= 0 {
		b.Names = d.Names
	}
	if b.Lookups <= 0 {
		b.Lookups = d.Lookups
	}
	if b.Entries <= 0 {
		b.Entries = d.Entries
	}
	return b
}

// pool is a budget of bytes shared by every connection of a run, taken
// in chunks before they are copied and the unused rest given back, so
// that no byte past the budget is ever relayed.
type pool struct{ left atomic.Int64 }

func newPool(n int64) *pool {
	p := &pool{}
	p.left.Store(n)
	return p
}

// take takes up to n bytes; 0 when the budget is spent.
func (p *pool) take(n int64) int64 {
	for {
		left := p.left.Load()
		got := min(n, left)
		if got <= 0 {
			return 0
		}
		if p.left.CompareAndSwap(left, left-got) {
			return got
		}
	}
}

func (p *pool) giveBack(n int64) { p.left.Add(n) }
