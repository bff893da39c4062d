package limits

import (
	"fmt"
	"time"
)

// MaxRows bounds the table: Values holds one place per row.
const MaxRows = 64

// Values are the table's limits by row: what a run's spec and a profile
// store, so that a new row needs no field anywhere. A row never set is 0:
// switched off where the row allows it. Values are a value (an array),
// copied and compared like one.
type Values struct{ a [MaxRows]Amount }

// Get is l's value.
func (v Values) Get(l *Limit) Amount { return v.a[index(l)] }

// Set puts a in l's place.
func (v *Values) Set(l *Limit, a Amount) { v.a[index(l)] = a }

// With is v with l set to a.
func (v Values) With(l *Limit, a Amount) Values {
	v.Set(l, a)
	return v
}

// Int is the value of a size or count row: bytes, a number.
func (v Values) Int(l *Limit) int64 { return v.Get(l).Int() }

// Duration is the value of a duration row.
func (v Values) Duration(l *Limit) time.Duration { return time.Duration(v.Get(l).Int()) }

// CPUs is the value of a CPUs row.
func (v Values) CPUs(l *Limit) float64 { return v.Get(l).Float() }

// Off names the rows of v that are switched off (a 0 where the word none
// would switch the row off), in table order: the report's limits.none.
func (v Values) Off() []string {
	off := []string{}
	for _, l := range All {
		if l.None && v.Get(l).IsZero() {
			off = append(off, l.Name)
		}
	}
	return off
}

// Check checks every row of v by the table's rule; name is how the
// message names a row (a flag, a profile field).
func (v Values) Check(name func(*Limit) string) error {
	for _, l := range All {
		if err := l.Check(v.Get(l)); err != nil {
			return &valueError{name(l), err}
		}
	}
	return nil
}

type valueError struct {
	name string
	err  error
}

func (e *valueError) Error() string { return e.name + " " + e.err.Error() }
func (e *valueError) Unwrap() error { return e.err }

// Of is Values from a value per row, for a Spec or a profile written out
// in Go: an int, int64 or time.Duration for a size, count or duration
// row, a float64 (or an int) for CPUs. Another type is a bug: Of panics.
//
//	limits.Of(map[*limits.Limit]any{limits.Memory: 2 << 30, limits.CPUQuota: 0.5})
func Of(m map[*Limit]any) Values {
	var v Values
	for l, x := range m {
		switch n := x.(type) {
		case int:
			v.Set(l, amountOf(l, float64(n), int64(n)))
		case int64:
			v.Set(l, amountOf(l, float64(n), n))
		case time.Duration:
			v.Set(l, Int(n))
		case float64:
			v.Set(l, Float(n))
		default:
			panic(fmt.Sprintf("limits.Of: %s: a %T is no value of a %s row", l.Name, x, l.Kind))
		}
	}
	return v
}

func amountOf(l *Limit, f float64, n int64) Amount {
	if l.Kind == CPUs {
		return Float(f)
	}
	return Int(n)
}

// index is l's place in All; a row outside All is a bug.
func index(l *Limit) uint {
	for i, r := range All {
		if r == l {
			return uint(i)
		}
	}
	panic("limits: a row outside the table: " + l.Name)
}
