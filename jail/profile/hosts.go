package profile

import (
	"errors"
	"fmt"

	"github.com/scidex/scidex-jail/jail/egress"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
)

// checkHosts is the spec's rule for allowed hosts and ranges (jail's
// validateHosts), in the profile's words: only with a mode that takes
// them, each an entry jail/egress reads.
func checkHosts(p Profile, mode netmode.Mode, o option.Origin) error {
	if pe := mode.CheckHosts(len(p.AllowHosts) + len(p.AllowRanges)); pe != nil {
		row := option.AllowHosts
		if len(p.AllowHosts) == 0 {
			row = option.AllowRanges
		}
		return fmt.Errorf("%s %s", o.Name(row), pe.Needs(o.Name(option.Net)))
	}
	if _, err := egress.Parse(p.AllowHosts, p.AllowRanges); err != nil {
		row := option.AllowHosts
		if ee := (*egress.EntryError)(nil); errors.As(err, &ee) && ee.Kind == "range" {
			row = option.AllowRanges
		}
		return fmt.Errorf("%s %w", o.Name(row), err)
	}
	return nil
}
