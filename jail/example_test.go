package jail_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/profile"
)

// A run from a profile, as the command line makes it. Running needs root
// or a delegated cgroup, so it is compiled, not run.
func Example() {
	profiles, _, err := profile.LoadProfiles("") // built-ins + /etc/scidex-jail/profiles.json
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	spec := profiles["default"].Spec() // every field the profile decides
	spec.ID, spec.Command = "SDA-1", []string{"python3", "script.py"}
	spec.TmpRoot, spec.Root, spec.Report = "/tmp", "/srv/platform", "/srv/reports/SDA-1.json"
	// HostUID, HostGID left 0: as root, the run leases ids of its own from
	// spec.UIDRange (jail/uidlease); set both to fix them.

	// Optional: the resolved copy, and what a run would do.
	r, err := spec.Validate() // errors.Is(err, jail.ErrBadSpec): what to fix
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	plan, warnings, err := jail.BuildPlan(r, jail.LookHost(&spec)) // err: a *PlanError, the plan still returned
	fmt.Println(plan.Namespaces, warnings, err)

	rep, err := jail.Run(&spec, nil) // err: nothing was created (bad input, ID in use)
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // the command line exits 125
		return
	}
	// rep.Status says why the run ended; rep.ExitCode is what to exit with.
	fmt.Println(rep.Summary(), rep.ExitCode)
}
