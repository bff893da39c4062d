package profile

import (
	"encoding/json"
	"fmt"
)

// ProfilesFile renders profiles as a profiles file (see ParseProfiles):
// {"profiles": {NAME: {field: value, ...}}}, every field written out in the
// file's own names and units, so that reading it back over the built-ins
// gives the same profiles. `scidex-jail profiles` prints it, and the Debian
// package installs the built-ins in this form as
// /etc/scidex-jail/profiles.json.
func ProfilesFile(ps map[string]Profile) ([]byte, error) {
	file := map[string]map[string]map[string]json.RawMessage{"profiles": {}}
	for name, p := range ps {
		b, err := json.Marshal(p.View())
		if err != nil {
			return nil, fmt.Errorf("bug: marshal profile %s: %w", name, err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(b, &fields); err != nil {
			return nil, fmt.Errorf("bug: unmarshal profile %s: %w", name, err)
		}
		// The name is the key; a base is not needed when every field is
		// given.
		delete(fields, "name")
		file["profiles"][name] = fields
	}
	out, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("bug: marshal profiles file: %w", err)
	}
	return append(out, '\n'), nil
}
