package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// schemaNode is one subschema of the report's JSON Schema, as decoded.
type schemaNode = map[string]any

// parseSchema is the report's JSON Schema, decoded afresh (a test may
// change its copy).
func parseSchema() (schemaNode, error) {
	var doc schemaNode
	if err := json.Unmarshal(JSONSchema, &doc); err != nil {
		return nil, fmt.Errorf("report.schema.json: %w", err)
	}
	return doc, nil
}

// schemaCheck holds the schema to the Go type t both ways, by what t
// writes: a value of t with every field set (full) is written as JSON and
// walked beside the schema. Every field written must be a property of its
// object in the schema, of the JSON type it is written as; every property
// must be written by some field; every object with properties must refuse
// the fields it does not name. Two more walks, of the value with its
// scalars zero (full's containers and bare), find each required property
// written when its field is empty: what omitempty leaves out is not
// required. It returns what differs, one line each, and the $defs the
// walk reached.
func schemaCheck(doc schemaNode, t reflect.Type) (diffs []string, reached map[string]bool) {
	c := &checker{doc: doc, reached: map[string]bool{}}
	for _, f := range []fill{every, containers, bare} {
		b, err := json.Marshal(full(t, f).Interface())
		if err != nil {
			return []string{fmt.Sprintf("marshal a full %s: %v", t, err)}, nil
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return []string{fmt.Sprintf("read back a full %s: %v", t, err)}, nil
		}
		c.required = f != every
		c.walk("report", v, doc)
	}
	slices.Sort(c.diffs)
	return slices.Compact(c.diffs), c.reached
}

type checker struct {
	doc      schemaNode
	required bool // a walk of a value with empty fields: check required properties only
	diffs    []string
	reached  map[string]bool
}

func (c *checker) differ(format string, args ...any) {
	c.diffs = append(c.diffs, fmt.Sprintf(format, args...))
}

// resolve follows n's $ref (into $defs) to the node it names.
func (c *checker) resolve(n schemaNode) schemaNode {
	for {
		ref, ok := n["$ref"].(string)
		if !ok {
			return n
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := c.doc["$defs"].(schemaNode)
		next, found := defs[name].(schemaNode)
		if !ok || !found {
			c.differ("%s: no such definition", ref)
			return schemaNode{}
		}
		c.reached[name] = true
		n = next
	}
}

func (c *checker) walk(path string, v any, n schemaNode) {
	n = c.resolve(n)
	if want := jsonType(v); !c.required && !allows(n, want) {
		c.differ("%s: written as %s, the schema says %s", path, want, types(n))
		return
	}
	switch v := v.(type) {
	case map[string]any:
		c.object(path, v, n)
	case []any:
		items, _ := n["items"].(schemaNode)
		for _, x := range v {
			if items == nil {
				c.differ("%s: an array whose items the schema does not describe", path)
				return
			}
			c.walk(path+"[]", x, items)
		}
	}
}

func (c *checker) object(path string, v map[string]any, n schemaNode) {
	props, _ := n["properties"].(schemaNode)
	extra := n["additionalProperties"]
	if c.required {
		for _, r := range asStrings(n["required"]) {
			if _, ok := v[r]; !ok {
				c.differ("%s.%s: required by the schema, left out by the Go type when empty (omitempty)", path, r)
			}
		}
	} else {
		if props != nil && extra != false {
			c.differ("%s: the schema allows fields it does not name (additionalProperties %v), want false", path, extra)
		}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if _, ok := v[k]; !ok {
				c.differ("%s.%s: in the schema, written by no field of the Go type", path, k)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if p, ok := props[k].(schemaNode); ok {
			c.walk(path+"."+k, v[k], p)
		} else if e, ok := extra.(schemaNode); ok && props == nil {
			c.walk(path+"."+k, v[k], e) // a map: every key's value
		} else if !c.required {
			c.differ("%s.%s: a field of the Go type the schema does not name", path, k)
		}
	}
}

// jsonType is the JSON Schema type of a decoded value: an integral
// number is an integer.
func jsonType(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	}
	return "null"
}

// types is what n says a value's type is: its type keyword, else the
// types of its const or enum values.
func types(n schemaNode) []string {
	switch t := n["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return asStrings(t)
	}
	var out []string
	if k, ok := n["const"]; ok {
		out = append(out, jsonType(k))
	}
	if e, ok := n["enum"].([]any); ok {
		for _, x := range e {
			out = append(out, jsonType(x))
		}
	}
	return out
}

// allows says whether n lets a value be of type t. An integer is no
// number here: full writes every float as 1.5, so an integral value came
// from an integer field, whose schema says integer.
func allows(n schemaNode, t string) bool {
	return slices.Contains(types(n), t)
}

func asStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
