package jail

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// What a run needs from a container it is started in, checked before
// anything is created so that the refusal names what the container must
// allow: a writable tmp-root (a read-only root file system needs a volume
// there), and, when the jail runs as root of a user namespace it did not
// make, the analysis' uid and gid mapped in it (a container that maps only
// its root cannot hand the analysis another uid).

// validateContainer is part of Spec.Validate.
func (s *Spec) validateContainer() error {
	if err := unix.Access(s.TmpRoot, unix.W_OK|unix.X_OK); err != nil {
		tmp := s.From.Name(option.TmpRoot)
		how := "make it writable by uid " + strconv.Itoa(os.Geteuid()) + ", or give another " + tmp
		if errors.Is(err, unix.EROFS) {
			how = "in a container with a read-only root, mount a writable volume there (a Kubernetes emptyDir at /tmp), or give " + tmp + " one"
		}
		return fmt.Errorf("%w: %s %s is not writable (%w): %s", ErrBadSpec, tmp, s.TmpRoot, err, how)
	}
	if os.Geteuid() != 0 || s.leased() {
		// Rootless: the analysis runs as this uid, which is mapped. A
		// leased id: uidlease.Check checks the whole range.
		return nil
	}
	for _, m := range []struct {
		file string
		row  option.Row
		id   int
	}{{"/proc/self/uid_map", option.UID, s.HostUID}, {"/proc/self/gid_map", option.GID, s.HostGID}} {
		b, err := sysfile.Read(m.file)
		if err != nil {
			return fmt.Errorf("read %s: %w", m.file, err)
		}
		if !idMapped(string(b), m.id) {
			return fmt.Errorf("%w: %s %d is not mapped in the user namespace the jail runs in (%s: %s): a container must map a range of ids that includes it (Kubernetes hostUsers: false maps 65536; runc, podman and LXC map subordinate ids from /etc/subuid and /etc/subgid), or pass %s with an id that is mapped, other than 0",
				ErrBadSpec, s.From.Name(m.row), m.id, m.file, strings.Join(strings.Fields(string(b)), " "), s.From.Name(m.row))
		}
	}
	return nil
}

// idMapped reports whether id (as seen in this namespace) is in one of
// the ranges of a /proc/PID/uid_map or gid_map: lines of "inside outside
// count" (uidlease.Unmapped reads them).
func idMapped(idMap string, id int) bool {
	if id < 0 || id > math.MaxUint32 {
		return false
	}
	_, missing := uidlease.Unmapped(uidlease.Range{First: uint32(id), Last: uint32(id)}, []byte(idMap))
	return !missing
}
