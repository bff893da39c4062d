package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// JailBinary provides the jail binary for a test package's TestMain, with
// its init program (scidex-jail-init) beside it, where the jail looks for
// it, in a fresh directory of mode 0755 owned by the caller (root's, for
// the jail's check of the init as root): the init is exec'd as the
// analysis' uid, which must be able to reach it. With $SCIDEX_JAIL_BIN set
// (the VM harness and `make bench` build it outside; building under
// emulation is slow) that binary and the init beside it are copied there;
// otherwise ./cmd/scidex-jail and ./cmd/scidex-jail-init of the module
// holding the working directory are built with CGO_ENABLED=0 and -trimpath,
// as `make build` does. cleanup removes the directory.
func JailBinary() (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "scidex-jail-bin-")
	if err != nil {
		return "", func() {}, fmt.Errorf("make the jail binary's directory: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", cleanup, fmt.Errorf("chmod %s: %w", dir, err)
	}
	bin = filepath.Join(dir, "scidex-jail")
	if prebuilt := os.Getenv("SCIDEX_JAIL_BIN"); prebuilt != "" {
		if err := copyExecutable(prebuilt, bin); err != nil {
			return "", cleanup, fmt.Errorf("SCIDEX_JAIL_BIN: %w", err)
		}
		if err := copyExecutable(InitBeside(prebuilt), InitBeside(bin)); err != nil {
			return "", cleanup, fmt.Errorf("SCIDEX_JAIL_BIN: the init beside it: %w", err)
		}
		return bin, cleanup, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", cleanup, fmt.Errorf("build scidex-jail: %w", err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", cleanup, fmt.Errorf("build scidex-jail: %w; or set SCIDEX_JAIL_BIN to a built binary", err)
	}
	for out, pkg := range map[string]string{bin: "./cmd/scidex-jail", InitBeside(bin): "./cmd/scidex-jail-init"} {
		build := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if o, err := build.CombinedOutput(); err != nil {
			return "", cleanup, fmt.Errorf("build %s in %s: %w\n%s", pkg, root, err, o)
		}
	}
	return bin, cleanup, nil
}

// InitBeside is the init program's path beside the jail binary bin, where
// the jail looks for it first (and where make build puts it).
func InitBeside(bin string) string {
	return filepath.Join(filepath.Dir(bin), "scidex-jail-init")
}

// moduleRoot is the nearest directory at or above dir holding a go.mod.
func moduleRoot(dir string) (string, error) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("find go.mod: %w", err)
		}
		if d == filepath.Dir(d) {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
	}
}

func copyExecutable(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}
