package profile_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail/profile"
)

// A run's spec from a profile. The default profiles file is the host's
// (/etc/scidex-jail/profiles.json), so the output is not fixed: it is
// compiled, not run.
func Example() {
	ps, path, err := profile.LoadProfiles("") // "" = the default file, if it exists
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // names the file and the field's path: profiles.<name>.<field>
		return
	}
	p, ok := ps["default"]
	if !ok {
		fmt.Fprintf(os.Stderr, "%s has no profile default\n", path)
		return
	}
	spec := p.Spec() // then the run's own fields: ID, command, tmp-root, ...
	spec.ID, spec.Command, spec.TmpRoot = "SDA-1", []string{"python3", "script.py"}, "/tmp"
	fmt.Println(spec.Profile, spec.Net)
}
