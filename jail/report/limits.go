package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/scidex/scidex-jail/jail/limits"
)

// LimitsReport is the budget the run was given: the profile's name, then
// one field per row of jail/limits' table at the row's Report path
// (limits.memory_bytes, limits.outputs.entries; sizes and counts as
// integers, durations in seconds, CPUs as a number), then none, the
// limits switched off (0 in their field), and not_enforced, the limits
// asked for that no layer held on this run (0 in their field too: a
// report never states a limit nothing enforced). It has no field per
// limit: a new row is a new field of the report with no line here.
type LimitsReport struct {
	Profile string
	Values  limits.Values
	// NotEnforced names the limits the run asked for that no layer held
	// (Unheld), in table order; empty when every limit was held.
	NotEnforced []string
	none        []string // none, when not the values' Off: read back, or fixed by Unheld
}

// None names the limits switched off, in table order: as a report read
// back gave them (or as they were before Unheld), else from the values.
func (r LimitsReport) None() []string {
	if r.none != nil {
		return r.none
	}
	return r.Values.Off()
}

// Unheld is r where no layer holds the limits ls on this run: each is
// named in NotEnforced and its value is 0, never the value asked for;
// none still names only the limits switched off.
func (r LimitsReport) Unheld(ls []*limits.Limit) LimitsReport {
	r.none = r.None()
	r.NotEnforced = []string{}
	for _, l := range ls {
		r.Values.Set(l, limits.Amount{})
		r.NotEnforced = append(r.NotEnforced, l.Name)
	}
	return r
}

// limitsObject is the object the rows' Report paths are below.
const limitsObject = "limits."

// reportValue is a row's value as the report writes it.
func reportValue(l *limits.Limit, a limits.Amount) any {
	switch l.Kind {
	case limits.Duration:
		return time.Duration(a.Int()).Seconds()
	case limits.CPUs:
		return a.Float()
	}
	return a.Int()
}

// splitReport is a row's Report path below limits: the nested object it
// is in ("" for none) and its field.
func splitReport(l *limits.Limit) (parent, field string) {
	key := strings.TrimPrefix(l.Report, limitsObject)
	if p, f, nested := strings.Cut(key, "."); nested {
		return p, f
	}
	return "", key
}

// MarshalJSON writes the object in the table's order: a row below a
// nested object (outputs) opens it where its first row stands. It
// appends to one buffer, the integers by strconv (the same digits
// encoding/json writes), not through fmt and a json.Marshal per row:
// every report encodes it, between a served run's end and its reply.
func (r LimitsReport) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, `{"profile":`...)
	name, _ := json.Marshal(r.Profile)
	b = append(b, name...)
	open, first := "", false // the nested object being written; whether its first field is next
	for _, l := range limits.All {
		parent, field := splitReport(l)
		if parent != open {
			if open != "" {
				b = append(b, '}')
			}
			if parent != "" {
				b = append(b, ',')
				b = strconv.AppendQuote(b, parent)
				b = append(b, ':', '{')
				first = true
			}
			open = parent
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = strconv.AppendQuote(b, field)
		b = append(b, ':')
		switch v := reportValue(l, r.Values.Get(l)).(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		default:
			j, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("report: %s: %w", l.Report, err)
			}
			b = append(b, j...)
		}
	}
	if open != "" {
		b = append(b, '}')
	}
	none, _ := json.Marshal(r.None())
	unheld := r.NotEnforced
	if unheld == nil {
		unheld = []string{}
	}
	held, _ := json.Marshal(unheld)
	b = append(b, `,"none":`...)
	b = append(b, none...)
	b = append(b, `,"not_enforced":`...)
	b = append(b, held...)
	return append(b, '}'), nil
}

// UnmarshalJSON reads the object MarshalJSON writes.
func (r *LimitsReport) UnmarshalJSON(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	*r = LimitsReport{}
	if p, ok := top["profile"]; ok {
		if err := json.Unmarshal(p, &r.Profile); err != nil {
			return fmt.Errorf("limits.profile: %w", err)
		}
	}
	if n, ok := top["none"]; ok {
		if err := json.Unmarshal(n, &r.none); err != nil {
			return fmt.Errorf("limits.none: %w", err)
		}
	}
	if n, ok := top["not_enforced"]; ok {
		if err := json.Unmarshal(n, &r.NotEnforced); err != nil {
			return fmt.Errorf("limits.not_enforced: %w", err)
		}
	}
	for _, l := range limits.All {
		raw, ok := lookup(top, strings.TrimPrefix(l.Report, limitsObject))
		if !ok {
			continue
		}
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return fmt.Errorf("%s: %w", l.Report, err)
		}
		switch l.Kind {
		case limits.Duration:
			r.Values.Set(l, limits.Int(int64(math.Round(f*float64(time.Second)))))
		case limits.CPUs:
			r.Values.Set(l, limits.Float(f))
		default:
			var n int64
			if err := json.Unmarshal(raw, &n); err != nil {
				return fmt.Errorf("%s: %w", l.Report, err)
			}
			r.Values.Set(l, limits.Int(n))
		}
	}
	return nil
}

// lookup finds a dotted path (outputs.entries) in a decoded object.
func lookup(obj map[string]json.RawMessage, path string) (json.RawMessage, bool) {
	head, rest, nested := strings.Cut(path, ".")
	raw, ok := obj[head]
	if !ok || !nested {
		return raw, ok
	}
	var sub map[string]json.RawMessage
	if json.Unmarshal(raw, &sub) != nil {
		return nil, false
	}
	return lookup(sub, rest)
}
