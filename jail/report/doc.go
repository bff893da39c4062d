// Package report is the one JSON object a run produces, as Go types: why
// the run ended (Status, one reason), what it used, what was enforced,
// which files it left (Output), the timed phases, and, when the results
// could not be delivered, what was lost (DeliveryFailed). Every JSON name
// of the report is declared here: the facilities (cgroupfs' counters,
// runfiles' listing) keep plain types, and the core maps their values
// into these where it assembles the report.
//
// The JSON Schema of the report is JSONSchema (report.schema.json, which
// `scidex-jail schema` prints), whose version is ReportSchema: a field
// changes meaning or goes away, or a status or setup stage is added, only
// with a new version. The tests hold it to these types both ways (every
// field written is a property of its type, every property is written,
// every object refuses a field it does not name), and Python's typed
// report to it (python/tests/test_report_types.py).
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
