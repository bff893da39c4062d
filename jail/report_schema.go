package jail

import _ "embed"

// ReportJSONSchema is the JSON Schema (draft 2020-12) of the report, the
// file jail/schema/report.schema.json: `scidex-jail schema` prints it, the
// Debian package and the Python package ship it. Its $id ends in the
// version that report.ReportSchema names, and its schema property is that
// constant. Every object in it allows fields it does not name, so a field
// added within a version breaks no reader that validates against it;
// removing, renaming or changing the meaning of a field, or adding a
// status or a setup stage, is a new version (report.ReportSchema, $id and the
// file together).
//
//go:embed schema/report.schema.json
var ReportJSONSchema []byte
