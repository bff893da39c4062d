package report

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSchemaHoldsTheTypes: the report's JSON Schema and the report's Go
// types say the same fields, both ways, with the same JSON types; every
// object refuses fields it does not name; a required property is one the
// Go type always writes. (The limits object is made from jail/limits'
// rows, TestLimitsInSchema; it is held here too, as the rows write it.)
func TestSchemaHoldsTheTypes(t *testing.T) {
	doc, err := parseSchema()
	if err != nil {
		t.Fatal(err)
	}
	diffs, reached := schemaCheck(doc, reflect.TypeFor[Report]())
	for _, d := range diffs {
		t.Errorf("schema and Report differ: %s", d)
	}
	defs, _ := doc["$defs"].(schemaNode)
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		if !reached[name] {
			t.Errorf("$defs.%s: describes no field of Report (a definition no property refers to)", name)
		}
	}
}

// The report with a field more, as a field added to the report's types
// would be: at the top (withSandbox) or in a nested object (withEnforced,
// whose enforced hides Report's, as encoding/json lets the shallower
// field win).
type (
	withSandbox struct {
		Report
		Sandbox string `json:"sandbox"`
	}
	enforcedWithEgress struct {
		EnforcedReport
		Egress []string `json:"egress,omitempty"`
	}
	withEnforced struct {
		Report
		Enforced enforcedWithEgress `json:"enforced"`
	}
)

// TestHypotheticalReportField: a field added to the report's types fails
// the schema check, naming it, until the schema has it, with its type; a
// property the schema has that no field writes fails too, as does a
// property of another type, and an object that lets fields through. Then
// python/tests/test_report_types.py fails until Python types the field.
func TestHypotheticalReportField(t *testing.T) {
	str := func() schemaNode { return schemaNode{"type": "string"} }
	// def is the object the schema defines under $defs as name ("": its top).
	def := func(doc schemaNode, name string) schemaNode {
		if name == "" {
			return doc
		}
		return doc["$defs"].(schemaNode)[name].(schemaNode)
	}
	props := func(n schemaNode) schemaNode { return n["properties"].(schemaNode) }
	for _, c := range []struct {
		name   string
		typ    reflect.Type
		schema func(doc schemaNode) // the schema's change; nil for none
		want   string               // "" when they agree, else a piece of the one difference
	}{
		{"top field, schema without it", reflect.TypeFor[withSandbox](), nil, "report.sandbox: a field of the Go type the schema does not name"},
		{"top field, schema with it", reflect.TypeFor[withSandbox](), func(doc schemaNode) {
			props(def(doc, ""))["sandbox"] = str()
		}, ""},
		{"top field, schema with another type", reflect.TypeFor[withSandbox](), func(doc schemaNode) {
			props(def(doc, ""))["sandbox"] = schemaNode{"type": "integer"}
		}, "report.sandbox: written as string, the schema says [integer]"},
		{"nested field, schema without it", reflect.TypeFor[withEnforced](), nil, "report.enforced.egress: a field of the Go type the schema does not name"},
		{"nested field, schema with it", reflect.TypeFor[withEnforced](), func(doc schemaNode) {
			props(def(doc, "enforced"))["egress"] = schemaNode{"$ref": "#/$defs/strings"}
		}, ""},
		{"nested field, required though omitempty", reflect.TypeFor[withEnforced](), func(doc schemaNode) {
			e := def(doc, "enforced")
			props(e)["egress"] = schemaNode{"$ref": "#/$defs/strings"}
			e["required"] = append(e["required"].([]any), "egress")
		}, "report.enforced.egress: required by the schema, left out by the Go type when empty"},
		{"property no field writes", reflect.TypeFor[Report](), func(doc schemaNode) {
			props(def(doc, "served"))["ghost"] = str()
		}, "report.served.ghost: in the schema, written by no field of the Go type"},
		{"a field's type changed in the schema", reflect.TypeFor[Report](), func(doc schemaNode) {
			props(def(doc, ""))["kept"] = str()
		}, "report.kept: written as boolean, the schema says [string]"},
		{"an integer the schema calls a number", reflect.TypeFor[Report](), func(doc schemaNode) {
			props(def(doc, ""))["exit_code"] = schemaNode{"type": "number"}
		}, "report.exit_code: written as integer, the schema says [number]"},
		{"an object open again", reflect.TypeFor[Report](), func(doc schemaNode) {
			def(doc, "phase")["additionalProperties"] = true
		}, "report.phases[]: the schema allows fields it does not name (additionalProperties true), want false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := parseSchema()
			if err != nil {
				t.Fatal(err)
			}
			if c.schema != nil {
				c.schema(doc)
			}
			diffs, _ := schemaCheck(doc, c.typ)
			switch {
			case c.want == "" && len(diffs) != 0:
				t.Errorf("schemaCheck(%s) = %q, want no difference", c.typ, diffs)
			case c.want != "" && (len(diffs) != 1 || !strings.Contains(diffs[0], c.want)):
				t.Errorf("schemaCheck(%s) = %q, want one difference: %q", c.typ, diffs, c.want)
			}
		})
	}
}

// TestOutputTypesInSchema: the schema's output types are the report's
// OutputType values, no more, no fewer.
func TestOutputTypesInSchema(t *testing.T) {
	var s struct {
		Defs struct {
			Output struct {
				Properties struct {
					Type struct {
						Enum []OutputType `json:"enum"`
					} `json:"type"`
				} `json:"properties"`
			} `json:"output"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(JSONSchema, &s); err != nil {
		t.Fatalf("report.schema.json: %v", err)
	}
	want := []OutputType{OutputFile, OutputDir, OutputSymlink, OutputOther}
	if got := s.Defs.Output.Properties.Type.Enum; !slices.Equal(got, want) {
		t.Errorf("report.schema.json output type enum = %q, want %q", got, want)
	}
}

// TestSchemaNoDuplicateKeys: no object of the schema's text names a key
// twice. A decoder keeps the last of two and a reader of the file sees
// both: the copies drift (served was twice, identical, in v1).
func TestSchemaNoDuplicateKeys(t *testing.T) {
	d := json.NewDecoder(bytes.NewReader(JSONSchema))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next token is a key
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if k, ok := tok.(string); ok && top != nil && top.object && top.key {
			if top.keys[k] {
				t.Errorf("report.schema.json: key %q twice in one object (at byte %d)", k, d.InputOffset())
			}
			top.keys[k], top.key = true, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true // a value ended: a key or the end comes next
		}
	}
	if len(stack) != 0 {
		t.Errorf("report.schema.json: %d objects or arrays not closed", len(stack))
	}
}

// TestReportSchemaVersion: the schema file names the version the reports
// carry, in its $id and as the only value of their schema field, and its
// status enum holds every status the jail reports.
func TestReportSchemaVersion(t *testing.T) {
	var s struct {
		ID         string `json:"$id"`
		Draft      string `json:"$schema"`
		Properties struct {
			Schema struct {
				Const string `json:"const"`
			} `json:"schema"`
		} `json:"properties"`
		Defs struct {
			Status struct {
				Enum []Status `json:"enum"`
			} `json:"status"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(JSONSchema, &s); err != nil {
		t.Fatalf("report.schema.json: %v", err)
	}
	if s.Draft != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %q, want draft 2020-12", s.Draft)
	}
	if !strings.HasSuffix(s.ID, "/"+ReportSchema) || s.Properties.Schema.Const != ReportSchema {
		t.Errorf("$id = %q, schema const %q, want both to name %q", s.ID, s.Properties.Schema.Const, ReportSchema)
	}
	for _, st := range []Status{StatusOK, StatusExitNonzero, StatusSignaled, StatusTimeout, StatusCancelled, StatusSetupError,
		StatusOOMKilled, StatusPIDsLimit, StatusDiskLimit, StatusDeliveryFailed, StatusOutputLimit} {
		if !slices.Contains(s.Defs.Status.Enum, st) {
			t.Errorf("status enum %q lacks %q", s.Defs.Status.Enum, st)
		}
	}
}
