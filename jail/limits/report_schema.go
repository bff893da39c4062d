package limits

import "strings"

// The descriptions of the report's limits objects in its JSON Schema.
const (
	limitsDescription  = "The effective limits; 0 is off, and named in none (switched off) or not_enforced (asked for, but no layer held it on this run)."
	outputsDescription = "The budgets of the post-run work on what the analysis left: entries listed, bytes hashed and copied in all and of one file (apparent size), wall time; 0 is off."
	egressDescription  = "The egress network mode's budgets: connections in the run, bytes sent out and received (all connections together), time per connection; 0 is off (added within v1)."
)

// ReportSchema is the report's limits object as its JSON Schema gives it
// ($defs.limits of jail/report/report.schema.json), made from the rows: a
// field per row at its Report path (a duration in seconds, a size or a
// count an integer, CPUs a number), required unless the row was added
// within the report's schema version ([Limit.ReportOptional]), and none,
// the names of the rows the word none switches off, and not_enforced
// (optional: added within the version), the names of the rows a layer the
// run can go without holds (the cgroup leaf's). A test holds the
// file's section equal to it.
func ReportSchema() map[string]any {
	top := object(limitsDescription)
	top.props["profile"] = map[string]any{"type": "string", "minLength": 1}
	top.required = append(top.required, "profile")
	nested := map[string]*schemaObject{}
	var off, unheld []any
	for _, l := range All {
		o, field := top, strings.TrimPrefix(l.Report, "limits.")
		if parent, f, ok := strings.Cut(field, "."); ok {
			if nested[parent] == nil {
				nested[parent] = object(map[string]string{"outputs": outputsDescription, "egress": egressDescription}[parent])
				top.props[parent] = nested[parent]
			}
			o, field = nested[parent], f
		}
		o.props[field] = kindSchema(l.Kind)
		if !l.ReportOptional {
			o.required = append(o.required, field)
		}
		if l.None {
			off = append(off, l.Name)
		}
		if l.Cgroup != "" {
			unheld = append(unheld, l.Name)
		}
	}
	top.props["none"] = map[string]any{"type": "array", "items": map[string]any{"enum": off}, "uniqueItems": true}
	top.required = append(top.required, "none")
	top.props["not_enforced"] = map[string]any{"type": "array", "items": map[string]any{"enum": unheld}, "uniqueItems": true}
	return top.value()
}

type schemaObject struct {
	description string
	required    []any
	props       map[string]any
}

func object(description string) *schemaObject {
	return &schemaObject{description: description, props: map[string]any{}}
}

// value is o as JSON Schema: an object that refuses a field it does not
// name, as every object of the report's schema does (a row added is a
// field named here).
func (o *schemaObject) value() map[string]any {
	props := map[string]any{}
	for k, p := range o.props {
		if n, ok := p.(*schemaObject); ok {
			p = n.value()
		}
		props[k] = p
	}
	required := o.required
	if required == nil {
		required = []any{} // JSON Schema's required is a list, even empty (every row of an object added within the version)
	}
	v := map[string]any{"type": "object", "required": required, "additionalProperties": false, "properties": props}
	if o.description != "" {
		v["description"] = o.description
	}
	return v
}

// kindSchema is the schema of a value of kind k in the report.
func kindSchema(k Kind) map[string]any {
	switch k {
	case Duration:
		return map[string]any{"$ref": "#/$defs/seconds"}
	case CPUs:
		return map[string]any{"type": "number", "minimum": 0}
	}
	return map[string]any{"$ref": "#/$defs/count"}
}
