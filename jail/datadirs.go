package jail

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/view"
)

// The data dirs (data/ and docs/ of the platform's root) are where
// scripts look for them: bound read-only at their host path, named by
// SCIDEX_<NAME>_DIR, and linked from the run directory (./data), the
// working directory, since code written by people and by models reads
// data/x.csv. The link resolves to the host path, so its reads go through
// the same bind and Landlock rule; it is the jail's, never an output.

// dataLinks are the run directory's links to the data dirs found under the
// root: one per data dir named by one path component (data, not raw/v2,
// whose link would need a directory made in the run directory).
func dataLinks(s *Spec, h view.HostView) []protocol.Link {
	var links []protocol.Link
	for _, d := range s.DataDirs {
		p := filepath.Join(s.Root, d)
		if slices.Contains(h.DataDirs, p) && !strings.Contains(d, "/") && d != "." && d != ".." {
			links = append(links, protocol.Link{Name: d, Target: p})
		}
	}
	return links
}

// dataDirsReport is the report's line for each data dir: where it is, or
// that the root has none (said here, once, not as a warning on each run).
func dataDirsReport(s *Spec, mounted []string, links []protocol.Link) []string {
	out := []string{}
	for _, d := range s.DataDirs {
		p := filepath.Join(s.Root, d)
		i := slices.IndexFunc(links, func(l protocol.Link) bool { return l.Target == p })
		switch {
		case i >= 0:
			out = append(out, fmt.Sprintf("%s: %s, read-only, also at ./%s (a link in the run directory, never an output)", d, p, links[i].Name))
		case slices.Contains(mounted, p):
			out = append(out, fmt.Sprintf("%s: %s, read-only (no link in the run directory for a name of more than one component)", d, p))
		case s.Root == "":
			out = append(out, fmt.Sprintf("%s: not mounted (no root given)", d))
		default:
			out = append(out, fmt.Sprintf("%s: not mounted (%s does not exist, or is not a directory)", d, p))
		}
	}
	return out
}

// linkTargets are the run directory's links by name, for the listing to
// leave out (runfiles.Budget.Links).
func linkTargets(links []protocol.Link) map[string]string {
	if len(links) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, l := range links {
		m[l.Name] = l.Target
	}
	return m
}
