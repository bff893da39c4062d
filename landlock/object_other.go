//go:build !linux

package landlock

import (
	"os"
	"path/filepath"
)

// openObject finds path's type and resolved path; there are no O_PATH
// descriptors here (nor Landlock to add rules with them).
func openObject(path string) (object, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return object{fd: -1}, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return object{fd: -1}, err
	}
	return object{fd: -1, mode: fi.Mode().Type(), real: real}, nil
}

func closeObject(object) {}
