package initproc

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// lookCommand resolves argv[0] the way a shell would, with the target's PATH.
func lookCommand(name string, env []string, dir string) (string, int, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return name, 0, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	denied := ""
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR {
			continue
		}
		if unix.Access(p, unix.X_OK) == nil {
			return p, 0, nil
		}
		denied = p
	}
	if denied != "" {
		return "", protocol.ExitCannotExecute, errors.New(denied + ": permission denied: it is not executable inside the jail")
	}
	return "", protocol.ExitNotFound, errors.New(name + ": command not found in the jail's PATH " + path + " (the jail sees /usr, /bin, /lib*, /etc, data/ and docs/ and its run directory)")
}

func execErrorCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, syscall.ENOENT):
		return protocol.ExitNotFound
	default:
		return protocol.ExitCannotExecute
	}
}
