package report

import _ "embed"

// JSONSchema is the report's JSON Schema (draft 2020-12), the file
// jail/report/report.schema.json: `scidex-jail schema` prints it, the
// Debian package and the Python package ship it. Its $id ends in the
// version ReportSchema names, and its schema property is that constant.
//
// It names every field the types of this package write, with its type,
// and no other: every object in it refuses a field it does not name
// (additionalProperties false), and the tests hold it to the types both
// ways (TestSchemaHoldsTheTypes), so a field added here fails until the
// schema has it, and then Python's typed report fails until it types it.
// A field added within a version is optional in the schema (older reports
// lack it); removing, renaming or changing the meaning of a field, or
// adding a status or a setup stage, is a new version (ReportSchema, $id
// and the file together). A validator must use the schema of the binary
// that wrote the report, or a later one of the same version: an earlier
// one refuses a field added since.
//
//go:embed report.schema.json
var JSONSchema []byte
