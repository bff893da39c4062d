package limits

import "github.com/scidex/scidex-jail/jail/option"

// SchemaVersion is the version of the schema's shape; it grows when a
// field changes meaning or goes away (a new field or a new row is not a
// new version).
const SchemaVersion = 1

// Placeholder stands for the text the user gave in Messages: replace it
// (a quoted placeholder, "{text}", by the quoted text) to get the binary's
// message for that text.
const Placeholder = "{text}"

// LimitSchema is one row as `scidex-jail profiles --schema` prints it.
type LimitSchema struct {
	Name         string   `json:"name"`
	Kind         Kind     `json:"kind"`
	None         bool     `json:"none"` // the word none switches it off
	Zero         Zero     `json:"zero"` // what a 0 means: none, refused, amount
	Units        string   `json:"units"`
	Min          *float64 `json:"min"` // in units; null: no bound
	Max          *float64 `json:"max"`
	MinReason    string   `json:"min_reason,omitempty"`
	MaxReason    string   `json:"max_reason,omitempty"`
	Flag         string   `json:"flag"`
	ProfileField string   `json:"profile_field"`
	RequestField string   `json:"request_field"` // in a request's limits object: limits.memory
	Keyword      string   `json:"keyword"`       // the Python package's keyword argument
	ReportField  string   `json:"report_field"`
	Help         string   `json:"help"`
	// Messages are the binary's messages for a text the rule refuses,
	// with Placeholder where the text goes, the flag in front (as the
	// command line prints them): negative, zero, below, above, and
	// unreadable (not for sizes, whose syntax message names the fault).
	Messages map[string]string `json:"messages"`
}

// Schema is the table as data.
func Schema() []LimitSchema {
	out := make([]LimitSchema, 0, len(All))
	for _, l := range All {
		s := LimitSchema{
			Name: l.Name, Kind: l.Kind, None: l.None, Zero: l.Zero, Units: unitOf(l.Kind),
			MinReason: l.Min.Why, MaxReason: l.Max.Why,
			Flag: option.Origin{}.Name(l), ProfileField: l.Field, ReportField: l.Report, Help: l.Help,
			RequestField: l.RowNames().Request, Keyword: l.RowNames().Keyword,
			Messages: l.messages(),
		}
		if l.Min.Value > 0 {
			v := scale(l.Kind, l.Min.Value)
			s.Min = &v
		}
		if l.Max.Value > 0 {
			v := scale(l.Kind, l.Max.Value)
			s.Max = &v
		}
		out = append(out, s)
	}
	return out
}

// messages are the refusals of l, made by the code that makes them for a
// real text, with Placeholder for the text.
func (l *Limit) messages() map[string]string {
	// The schema is the command line's: Python shows these messages
	// for its keywords as the binary would for the flags.
	flag := option.Origin{}.Name(l) + ": "
	q := l.quantity(Placeholder)
	m := map[string]string{}
	if l.None && l.Kind != Size { // ParseSize refuses a negative size itself
		m["negative"] = flag + q + " is negative: give " + l.Give + l.orNone()
	} else if l.Kind != Size {
		m["negative"] = flag + l.unreadable(Placeholder).Error()
	}
	if l.Zero == ZeroRefused && l.None {
		m["zero"] = flag + l.zeroRefused(Placeholder).Error()
	}
	if l.Min.Value > 0 {
		m["below"] = flag + q + " is below " + l.Min.Why
	}
	if l.Max.Value > 0 {
		m["above"] = flag + q + " is above " + l.Max.Why
	}
	if l.Kind != Size {
		m["unreadable"] = flag + l.unreadable(Placeholder).Error()
	}
	return m
}
