package egress

import (
	"net/netip"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/stamp"
)

// keptHosts is the hosts file readHosts parsed last, kept while its stamp
// stays: a run with no network starts a Names, and the host's /etc/hosts
// was read and parsed for each (its open, read and close).
var keptHosts hostsFile

// hostsFile is a parsed hosts file and the stamp it was read at. The
// stamp is taken by a stat before the read, and the parse is kept only
// when its times are settled (stamp.Settled, the rule of the view's host
// looks): a change of the file, in place or a file renamed over it (or a
// symlink's target changed: stat follows it), then gives another stamp,
// and the file is read again. A file read after a change it did not stamp
// is only newer than its stamp, and read again at the next call.
type hostsFile struct {
	mu     sync.Mutex
	path   string
	stamp  stamp.File
	hosts  map[string][]netip.Addr // nil: none kept
	now    func() time.Time        // time.Now; the tests' clock
	parsed int                     // parseHosts' calls, for the tests
}

// readHosts is path's names and their addresses ("" or unreadable: none):
// a map shared with every other caller, read only.
func readHosts(path string) map[string][]netip.Addr {
	return keptHosts.read(path)
}

func (k *hostsFile) read(path string) map[string][]netip.Addr {
	if path == "" {
		return map[string][]netip.Addr{}
	}
	now := time.Now
	if k.now != nil {
		now = k.now
	}
	t := now() // before the stat: the time its stamp's age is judged by
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return map[string][]netip.Addr{}
	}
	s := stamp.Of(&st)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.hosts != nil && k.path == path && k.stamp == s {
		return k.hosts
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return map[string][]netip.Addr{}
	}
	k.parsed++
	hosts := parseHosts(b)
	k.hosts = nil
	if s.Settled(t) {
		k.path, k.stamp, k.hosts = path, s, hosts
	}
	return hosts
}
