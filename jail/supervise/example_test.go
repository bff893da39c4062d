package supervise_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/supervise"
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

	rep, err := supervise.Run(&spec, nil) // err: nothing was created (bad input, ID in use)
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // the command line exits 125
		return
	}
	// rep.Status says why the run ended; rep.ExitCode is what to exit with.
	fmt.Println(rep.Summary(), rep.ExitCode)
}
