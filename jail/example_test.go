package jail_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/profile"
)

// A run's plan from a profile, as the command line makes it: decided
// before anything exists (supervise.Run carries it out).
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

	r, err := spec.Validate() // errors.Is(err, jail.ErrBadSpec): what to fix
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	plan, warnings, err := jail.BuildPlan(r, jail.LookHost(&spec)) // err: a *PlanError, the plan still returned
	fmt.Println(plan.Namespaces, warnings, err)
}
