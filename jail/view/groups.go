package view

import (
	"os/user"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
	"github.com/scidex/scidex-jail/jail/report"
)

// OverflowID is the kernel's overflow uid or gid (kind), which an
// unmapped id shows as inside a user namespace; Linux's default, 65534,
// when it cannot be read.
func OverflowID(kind string) int {
	f := overflowFiles[kind]
	if f == nil {
		f = &keptFile{path: "/proc/sys/kernel/overflow" + kind}
	}
	if b, err := f.read(); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return v
		}
	}
	return 65534
}

// overflowFiles are OverflowID's sysctl files, each opened once a
// process: a sysctl's value is made at each read from its start, so a
// kept descriptor reads the value of the moment (root may change it),
// and the walk of /proc/sys to it (about 5 us each, twice in every run's
// plan) is not paid again.
var overflowFiles = map[string]*keptFile{
	"uid": {path: "/proc/sys/kernel/overflowuid"},
	"gid": {path: "/proc/sys/kernel/overflowgid"},
}

// keptFile is a kernel file read from its start at each read, through a
// descriptor opened at the first and kept while reads succeed.
type keptFile struct {
	path string
	mu   sync.Mutex
	fd   int // 0: not open (never the file's: 0 is stdin)
}

func (f *keptFile) read() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd <= 0 {
		fd, err := unix.Open(f.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		f.fd = fd
	}
	b, err := sysfile.ReadAt(f.fd, f.path)
	if err != nil {
		// Read the plain way, and open the file again next time.
		unix.Close(f.fd)
		f.fd = 0
		return sysfile.Read(f.path)
	}
	return b, nil
}

// LookGroups is the caller's supplementary groups when the jail runs
// rootless (nil as root: it clears them), with their names.
func LookGroups(euid int) (groups []report.HostGroup) {
	if euid == 0 {
		return nil
	}
	gids, err := unix.Getgroups()
	if err != nil {
		// Cannot happen (the buffer is sized by the kernel's answer); a
		// wrong guess is caught by the init's check before the fork.
		return nil
	}
	for _, g := range gids {
		hg := report.HostGroup{GID: g}
		if gr, err := user.LookupGroupId(strconv.Itoa(g)); err == nil {
			hg.Name = gr.Name
		}
		groups = append(groups, hg)
	}
	return groups
}
