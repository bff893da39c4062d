package runfiles_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scidex/scidex-jail/jail/runfiles"
)

// A run's files, in order, with the analysis played by a WriteFile. It
// needs no root: the caller's own uid and a temporary tmp-root.
func Example() {
	tmpRoot, err := os.MkdirTemp("", "runfiles-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmpRoot)
	reportPath := filepath.Join(tmpRoot, "SDA-1.json")

	report, err := runfiles.OpenReport(reportPath, "--report", reportPath) // the report's unnamed file, made as the run begins
	if err != nil {
		fmt.Println(err)
		return
	}
	defer report.Close()
	warn := runfiles.SweepLeftovers(tmpRoot, reportPath)                              // dead runs' leftovers, at most once a SweepInterval
	dir, stale, err := runfiles.CreateDir(tmpRoot, "SDA-1", os.Getuid(), os.Getgid()) // fresh, locked, marked; err wraps ErrBusy or ErrBadSpec
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Base(dir.Path()), len(warn), stale)

	// ... the analysis runs with dir.Path() as its working directory ...
	if err := os.WriteFile(filepath.Join(dir.Path(), "out.txt"), []byte("42\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	outs, over, err := runfiles.ListOutputs(ctx, dir.Path(), runfiles.Budget{Entries: 100, Bytes: 1 << 20}) // bounded by the budget and ctx
	for _, o := range outs {
		fmt.Println(o.Path, o.Type, o.Size, o.SHA256)
	}
	fmt.Println(over, err)
	errs := runfiles.Collect(ctx, dir.Path(), filepath.Join(tmpRoot, "collected"), outs) // never overwrites, never follows
	fmt.Println(errs)
	fmt.Println(dir.Remove())                           // or dir.Keep()
	fmt.Println(report.Write([]byte(`{"id":"SDA-1"}`))) // whole or not at all
	// Output:
	// scidex-analysis-SDA-1 0 false
	// out.txt file 3 084c799cd551dd1d8d5c5f9a5d593b2e931f5e36122ee5c793c1d08a19839cc0
	// <nil> <nil>
	// []
	// <nil>
	// <nil>
}
