package view

import (
	"os/user"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
	"github.com/scidex/scidex-jail/jail/report"
)

// OverflowID is the kernel's overflow uid or gid (kind), which an
// unmapped id shows as inside a user namespace; Linux's default, 65534,
// when it cannot be read.
func OverflowID(kind string) int {
	if b, err := sysfile.Read("/proc/sys/kernel/overflow" + kind); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return v
		}
	}
	return 65534
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
