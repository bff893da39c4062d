package limits

// Slot is where one limit's value is stored in a caller's own struct (a
// run's spec, a profile): the table says what a limit is, a Slot where it
// lives, so that one loop over a struct's slots parses, checks and reports
// every limit.
type Slot struct {
	Limit *Limit
	Get   func() Amount
	Set   func(Amount)
}

// IntSlot is the slot of a limit stored as a whole number (sizes, counts,
// durations) at p.
func IntSlot[T ~int64](l *Limit, p *T) Slot {
	return Slot{l, func() Amount { return Int(*p) }, func(a Amount) { *p = T(a.Int()) }}
}

// CPUSlot is the slot of a CPU quota stored at p.
func CPUSlot(l *Limit, p *float64) Slot {
	return Slot{l, func() Amount { return Float(*p) }, func(a Amount) { *p = a.Float() }}
}
