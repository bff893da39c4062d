package testutil

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ReportSchema is the report's JSON Schema, compiled by a maintained
// validator (santhosh-tekuri/jsonschema, draft 2020-12) rather than a
// check of our own, with formats (date-time) and contents (base64)
// asserted, which the draft leaves off by default.
type ReportSchema struct{ s *jsonschema.Schema }

// CompileReportSchema compiles the schema's text. The caller passes it in
// (report.JSONSchema): this package imports none of the module's.
func CompileReportSchema(text []byte) (*ReportSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse the report schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.AssertContent()
	const url = "report.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add the report schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile the report schema: %w", err)
	}
	return &ReportSchema{s}, nil
}

// Validate checks one report's JSON text against the schema; the error
// names every field that failed and why.
func (r *ReportSchema) Validate(report []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(report))
	if err != nil {
		return fmt.Errorf("report is not JSON: %w", err)
	}
	if err := r.s.Validate(v); err != nil {
		return fmt.Errorf("report does not match its schema: %w", err)
	}
	return nil
}
