package uidlease

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// Check refuses a range the host's account files or its user namespace
// give a reason not to use (see conflict and unmapped). It reads the files
// each time it is called: they are small (here, 30 µs for all six), and
// a cache could not tell an account added since.
func Check(r Range) error {
	files := map[string][]byte{}
	for _, name := range []string{"/etc/passwd", "/etc/group", "/etc/subuid", "/etc/subgid", "/proc/self/uid_map", "/proc/self/gid_map"} {
		b, err := sysfile.Read(name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("check uid range %s: %w", r, err)
		}
		files[name] = b
	}
	if err := conflict(r, files["/etc/passwd"], files["/etc/group"], files["/etc/subuid"], files["/etc/subgid"]); err != nil {
		return err
	}
	for _, m := range []string{"/proc/self/uid_map", "/proc/self/gid_map"} {
		if id, ok := Unmapped(r, files[m]); ok {
			return fmt.Errorf("%w: %s includes id %d, which is not mapped in the user namespace the jail runs in (%s: %s): in a container, give a range of ids it maps that no account of the container uses (Kubernetes hostUsers: false maps 65536 from 0; runc, podman and LXC map subordinate ids from /etc/subuid and /etc/subgid)", ErrRange, r, id, m, strings.Join(strings.Fields(string(files[m])), " "))
		}
	}
	return nil
}
