package hostcheck_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/childmode"
	"github.com/scidex/scidex-jail/jail/hostcheck"
)

// What `check` does: the probe child's side first thing in main, the
// checking side after it. The probe re-executes the running binary, so
// it is compiled, not run.
func Example() {
	// In main, first thing (the probe child):
	if childmode.Of(os.Args) == childmode.Probe {
		if err := hostcheck.SecurityChild(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The checking process:
	var plan *jail.Plan // jail.BuildPlan's for the profile checked
	sec := hostcheck.ProbeSecurity(plan.Init.Security)
	fmt.Println(sec.Landlock, sec.Seccomp)
	info, err := hostcheck.ProbeCgroup("") // "": this process's own cgroup
	if err != nil {
		found, fix := hostcheck.Explain(err)
		fmt.Println(found, fix)
		return
	}
	fmt.Println(info)
}
