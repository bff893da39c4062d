//go:build linux

package landlock

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// fsTree is the directory tree the filesystem test restricts itself to.
type fsTree struct {
	root, ro, rw, unlisted string
	roFile, single, secret string
	roTrue                 string // a copy of /bin/true in the read-only tree
}

func newFSTree(root string) fsTree {
	return fsTree{
		root:     root,
		ro:       filepath.Join(root, "ro"),
		rw:       filepath.Join(root, "rw"),
		unlisted: filepath.Join(root, "unlisted"),
		roFile:   filepath.Join(root, "ro", "file.txt"),
		single:   filepath.Join(root, "single.txt"),
		secret:   filepath.Join(root, "unlisted", "secret.txt"),
		roTrue:   filepath.Join(root, "ro", "true"),
	}
}

func TestRestrictFilesystem(t *testing.T) {
	if !inChild() {
		tr := newFSTree(t.TempDir())
		trueBin, err := os.ReadFile("/bin/true")
		if err != nil {
			t.Fatalf("os.ReadFile(/bin/true) = %v, want nil", err)
		}
		writeFile(t, tr.ro, "file.txt", "data", 0o644)
		writeFile(t, tr.ro, "sub/x", "x", 0o644)
		writeFile(t, tr.ro, "true", string(trueBin), 0o755)
		writeFile(t, tr.root, "single.txt", "single", 0o644)
		writeFile(t, tr.unlisted, "secret.txt", "secret", 0o644)
		if err := os.Mkdir(tr.rw, 0o755); err != nil {
			t.Fatalf("os.Mkdir(%q) = %v, want nil", tr.rw, err)
		}
		runInChild(t, 5, "LLT_ROOT="+tr.root)
		return
	}

	tr := newFSTree(os.Getenv("LLT_ROOT"))
	p := Policy{
		ReadExec:  systemReadExec(t),
		ReadOnly:  []string{tr.ro, tr.single, "/dev/zero"},
		ReadWrite: []string{tr.rw},
		Devices:   []string{"/dev/null"},
	}
	res := mustRestrict(t, p)
	abi, err := ProbeABI()
	if res.ABI != abi || err != nil {
		t.Errorf("Restrict().ABI = %d, want ProbeABI() = %d, %v", res.ABI, abi, err)
	}
	if res.Required != 5 {
		t.Errorf("Restrict().Required = %d, want 5", res.Required)
	}
	for _, want := range []string{"ro " + tr.ro, "ro " + tr.single, "rw " + tr.rw, "dev /dev/null", "rx /usr"} {
		if !slices.Contains(res.Rules, want) {
			t.Errorf("Restrict().Rules = %q, want it to contain %q", res.Rules, want)
		}
	}

	rw := func(name string) string { return filepath.Join(tr.rw, name) }
	denied := []error{unix.EACCES}
	crossDenied := []error{unix.EXDEV, unix.EACCES}
	runChecks(t, []check{
		{"ro read", "os.ReadFile(ro/file.txt)", func() error { _, err := os.ReadFile(tr.roFile); return err }, nil},
		{"ro list", "os.ReadDir(ro)", func() error { _, err := os.ReadDir(tr.ro); return err }, nil},
		{"ro write", "open(ro/file.txt, O_WRONLY)", func() error { return openClose(tr.roFile, unix.O_WRONLY) }, denied},
		{"ro truncate", "truncate(ro/file.txt)", func() error { return unix.Truncate(tr.roFile, 0) }, denied},
		{"ro create", "open(ro/new, O_CREAT)", func() error { return openClose(filepath.Join(tr.ro, "new"), unix.O_WRONLY|unix.O_CREAT) }, denied},
		{"ro mkdir", "mkdir(ro/d)", func() error { return unix.Mkdir(filepath.Join(tr.ro, "d"), 0o755) }, denied},
		{"ro unlink", "unlink(ro/file.txt)", func() error { return unix.Unlink(tr.roFile) }, denied},
		{"ro rename", "rename(ro/file.txt, ro/f2)", func() error { return unix.Rename(tr.roFile, filepath.Join(tr.ro, "f2")) }, denied},
		{"ro exec", "exec(ro/true)", func() error { return exec.Command(tr.roTrue).Run() }, denied},
		{"ro single file read", "os.ReadFile(single.txt)", func() error { _, err := os.ReadFile(tr.single); return err }, nil},
		{"ro single file write", "open(single.txt, O_WRONLY)", func() error { return openClose(tr.single, unix.O_WRONLY) }, denied},
		{"rw create", "os.WriteFile(rw/new.txt)", func() error { return os.WriteFile(rw("new.txt"), []byte("out"), 0o644) }, nil},
		{"rw truncate", "truncate(rw/new.txt)", func() error { return unix.Truncate(rw("new.txt"), 1) }, nil},
		{"rw rename across dirs", "rename(rw/a/f, rw/b/f)", func() error { return renameAcross(rw("a"), rw("b")) }, nil},
		{"rw unlink", "unlink(rw/b/f)", func() error { return unix.Unlink(rw("b/f")) }, nil},
		{"rw exec own file", "exec(rw/true)", func() error { return copyAndRun(tr.roTrue, rw("true")) }, nil},
		{"rename ro into rw", "rename(ro/file.txt, rw/moved)", func() error { return unix.Rename(tr.roFile, rw("moved")) }, crossDenied},
		{"link ro into rw", "link(ro/file.txt, rw/hard)", func() error { return unix.Link(tr.roFile, rw("hard")) }, crossDenied},
		{"rw symlink create", "symlink(secret, rw/link)", func() error { return unix.Symlink(tr.secret, rw("link")) }, nil},
		{"rw symlink to unlisted", "os.ReadFile(rw/link)", func() error { _, err := os.ReadFile(rw("link")); return err }, denied},
		{"unlisted read", "os.ReadFile(unlisted/secret.txt)", func() error { _, err := os.ReadFile(tr.secret); return err }, denied},
		{"unlisted list", "os.ReadDir(unlisted)", func() error { _, err := os.ReadDir(tr.unlisted); return err }, denied},
		{"unlisted parent list", "os.ReadDir(root)", func() error { _, err := os.ReadDir(tr.root); return err }, denied},
		{"rx exec", "exec(/bin/true)", func() error { return exec.Command("/bin/true").Run() }, nil},
		{"rx write", "open(/usr/bin/true, O_WRONLY)", func() error { return openClose("/usr/bin/true", unix.O_WRONLY) }, denied},
		{"dev write trunc", "open(/dev/null, O_WRONLY|O_TRUNC)", func() error { return openClose("/dev/null", unix.O_WRONLY|unix.O_TRUNC) }, nil},
		// The kernel checks ioctl_dev before the driver: ENOTTY proves
		// the ioctl reached /dev/null, EACCES that Landlock stopped it.
		{"dev ioctl", "ioctl(/dev/null, TCGETS)", func() error { return ioctlTCGETS("/dev/null") }, []error{unix.ENOTTY}},
		{"ro device ioctl", "ioctl(/dev/zero, TCGETS)", func() error { return ioctlTCGETS("/dev/zero") }, denied},
		{"unlisted device", "open(/dev/full, O_RDONLY)", func() error { return openClose("/dev/full", unix.O_RDONLY) }, denied},
	})
}

func openClose(path string, flags int) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// renameAcross creates a/f and moves it to b/f, which needs "refer".
func renameAcross(a, b string) error {
	for _, d := range []string{a, b} {
		if err := unix.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := openClose(filepath.Join(a, "f"), unix.O_WRONLY|unix.O_CREAT); err != nil {
		return err
	}
	return unix.Rename(filepath.Join(a, "f"), filepath.Join(b, "f"))
}

// copyAndRun writes a copy of the executable src to dst and runs it.
func copyAndRun(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		return err
	}
	return exec.Command(dst).Run()
}

func ioctlTCGETS(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.IoctlGetTermios(fd, unix.TCGETS)
	return err
}
