package limits

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Amount is a limit's value: bytes, nanoseconds or a count (Int), or
// CPUs (Float). The zero Amount is a limit switched off, where the row
// allows that.
type Amount struct {
	n int64
	f float64
}

// Int is an amount of bytes, nanoseconds or a count.
func Int[T ~int64](n T) Amount { return Amount{n: int64(n)} }

// Float is an amount of CPUs.
func Float(f float64) Amount { return Amount{f: f} }

// Int is the amount of a size, duration or count row.
func (a Amount) Int() int64 { return a.n }

// Float is the amount of a CPUs row.
func (a Amount) Float() float64 { return a.f }

// IsZero reports a 0 amount: a limit switched off where it can be.
func (a Amount) IsZero() bool { return a.n == 0 && a.f == 0 }

func (a Amount) value() float64 {
	if a.n != 0 {
		return float64(a.n)
	}
	return a.f
}

// Parse reads a limit's text, as a flag or a profile field gives it. The
// message of an error starts with the text: the caller names what the
// user wrote in front of it.
func (l *Limit) Parse(s string) (Amount, error) {
	t := strings.TrimSpace(s)
	if t == NoLimit && l.None {
		return Amount{}, nil
	}
	a, err := l.read(s, t)
	if err != nil {
		return Amount{}, err
	}
	switch v := a.value(); {
	case v < 0 && !l.None:
		return Amount{}, l.unreadable(s)
	case v < 0:
		return Amount{}, fmt.Errorf("%s is negative: give %s%s", l.quantity(t), l.Give, l.orNone())
	case v == 0 && l.Zero == ZeroRefused && l.None:
		return Amount{}, l.zeroRefused(t)
	case v == 0:
		// A row without none that refuses 0 (shm) refuses it in Check,
		// which names the value with the flag: --shm 0.
		return Amount{}, nil
	}
	if err := l.bounds(a, func() string { return l.quantity(t) }); err != nil {
		return Amount{}, err
	}
	return a, nil
}

// read parses t by the row's kind; s is the text as given, for messages.
func (l *Limit) read(s, t string) (Amount, error) {
	switch l.Kind {
	case Size:
		n, err := ParseSize(s) // the message quotes the text as given
		return Amount{n: n}, err
	case Duration:
		d, err := time.ParseDuration(t)
		if err != nil {
			return Amount{}, l.unreadable(s)
		}
		return Amount{n: int64(d)}, nil
	case Count:
		n, err := strconv.ParseInt(t, 10, 64)
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange && l.Max.Value > 0 {
			return Amount{}, fmt.Errorf("%s is above %s", t, l.Max.Why)
		}
		if err != nil {
			return Amount{}, l.unreadable(s)
		}
		return Amount{n: n}, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(t, "xXpP_") {
		return Amount{}, l.unreadable(s)
	}
	return Amount{f: f}, nil
}

// Check checks a value that arrives typed (0 = switched off, where the
// row allows it), by the same rule as Parse. The message starts with the
// value.
func (l *Limit) Check(a Amount) error {
	if l.Kind == CPUs && (math.IsNaN(a.f) || math.IsInf(a.f, 0)) {
		return l.unreadable(fmt.Sprint(a.f))
	}
	switch v := a.value(); {
	case v < 0:
		return fmt.Errorf("%s is negative: give %s%s", l.Quantity(a), l.Give, l.orNone())
	case v == 0 && l.Zero == ZeroRefused && !l.None:
		return l.zeroRefused("0")
	case v == 0:
		return nil
	}
	return l.bounds(a, func() string { return l.Quantity(a) })
}

// bounds checks a against the row's minimum and maximum; q is the value
// as the message gives it, made only for a message (Check runs over every
// row of every run's limits, and formatting each took most of its time).
func (l *Limit) bounds(a Amount, q func() string) error {
	v := a.value()
	switch {
	case l.Min.Value > 0 && v < l.Min.Value:
		return fmt.Errorf("%s is below %s", q(), l.Min.Why)
	case l.Max.Value > 0 && v > l.Max.Value:
		return fmt.Errorf("%s is above %s", q(), l.Max.Why)
	}
	return nil
}

// unreadable is the message for text that is not a value of the kind.
func (l *Limit) unreadable(s string) error {
	syntax := l.Syntax
	if syntax == "" {
		syntax = l.Give
	}
	what := map[Kind]string{Duration: "a duration", Count: "a whole number", CPUs: "a number of CPUs"}[l.Kind]
	if l.Kind == Size {
		_, err := ParseSize(s)
		if err == nil { // a negative amount of a row without none
			err = fmt.Errorf("size %q is not a non-negative number with an optional unit (512M, 2G)", s)
		}
		return err
	}
	if !l.None {
		return fmt.Errorf("%q: give %s", s, syntax)
	}
	return fmt.Errorf("%q is not %s: give %s%s", s, what, syntax, l.orNone())
}

func (l *Limit) zeroRefused(t string) error {
	switch {
	case !l.None:
		return fmt.Errorf("0 %s is refused: %s", l.Unit, l.ZeroWhy)
	case l.Kind == Duration:
		return fmt.Errorf("%s: give %s, or write none for %s", t, l.Give, l.Off)
	}
	return fmt.Errorf("0 %s is refused: give %s, or write none for %s", l.Unit, l.Give, l.Off)
}

func (l *Limit) orNone() string {
	if !l.None {
		return ""
	}
	return ", or none for " + l.Off
}

// quantity is text as the messages give a value: with its unit for CPUs.
func (l *Limit) quantity(t string) string {
	if l.Kind == CPUs {
		return t + " CPUs"
	}
	return t
}

// Quantity is a value as the messages give it: 2G, 90s, 512, 0.5 CPUs.
func (l *Limit) Quantity(a Amount) string {
	switch l.Kind {
	case Size:
		return FormatSize(a.n)
	case Duration:
		return time.Duration(a.n).String()
	case Count:
		return strconv.FormatInt(a.n, 10)
	}
	return strconv.FormatFloat(a.f, 'g', -1, 64) + " CPUs"
}

// Format writes a value the way a profiles file gives it: none for a
// limit switched off, else the size, duration, count or CPUs.
func (l *Limit) Format(a Amount) string {
	if l.None && a.IsZero() {
		return NoLimit
	}
	if l.Kind == CPUs {
		return strconv.FormatFloat(a.f, 'g', -1, 64)
	}
	return strings.TrimSuffix(l.Quantity(a), " CPUs")
}
