package report_test

import (
	"encoding/json"
	"fmt"

	"github.com/scidex/scidex-jail/jail/report"
)

// A report read back, as a caller of `run --report` does.
func Example() {
	b := []byte(`{"schema":"scidex-jail.report/v1","id":"SDA-1","status":"ok","exit_code":0,"wall_seconds":1.5}`)
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Status == report.StatusOK, r.ExitCode)
	fmt.Println(r.Summary())
	// Output:
	// true 0
	// scidex-jail: run id=SDA-1 status=ok exit=0 wall=1.500s cpu=0.000s output_files=0
}
