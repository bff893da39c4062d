// Package report is the one JSON object a run produces, as Go types: why
// the run ended (Status, one reason), what it used, what was enforced,
// which files it left (Output), the timed phases, and, when the results
// could not be delivered, what was lost (DeliveryFailed). The JSON Schema
// of it is jail/schema/report.schema.json (`scidex-jail schema`), whose
// version is ReportSchema: a field changes meaning or goes away, or a
// status or setup stage is added, only with a new version.
//
// The jail's core assembles a Report once, at the end of a run, from the
// run's facts; the command line prints Summary and writes Encode's bytes.
// Nothing here runs anything: the types, their encoding and the rules of a
// failed delivery (exit ExitDeliveryFailed, the analysis' own status kept
// in analysis_status).
//
// Usage (the package's Example, which the tests run):
//
//	var r report.Report
//	err := json.Unmarshal(b, &r)
//	fmt.Println(r.Summary()) // scidex-jail: run id=... status=ok exit=0 ...
package report
