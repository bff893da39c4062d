package initconn

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/buildversion"
	"github.com/scidex/scidex-jail/jail/childmode"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// InitName is the file name of the init program (cmd/scidex-jail-init).
// What it runs as is its argv[0], the child mode childmode.Init
// (jail/childmode), which its main checks.
const InitName = "scidex-jail-init"

// initPlaces are where the init is looked for, relative to the directory
// of the running binary, in order: beside it (make build's bin/, a test's
// copy), then the Debian package's /usr/libexec/scidex-jail/ seen from
// /usr/bin. A fixed rule, no search path and no override: which file runs
// as the init of every run is decided by where the jail itself is.
var initPlaces = []string{InitName, filepath.Join("..", "libexec", "scidex-jail", InitName)}

// InitError is an init program the jail refuses to exec: missing, not
// safe to exec as root, or of another version. The run does not start
// (stage "init", exit 125).
type InitError struct {
	Path  string // the file, or the places looked at when none was found
	Found string // what is wrong with it
	Fix   string // how to put it right
}

func (e *InitError) Error() string {
	return fmt.Sprintf("init program %s: %s; %s", e.Path, e.Found, e.Fix)
}

// Program is the init's file, opened once per run (O_PATH): the run
// execs that open file, so what was checked is what runs, whatever
// happens to the path meanwhile.
type Program struct {
	path string
	f    *os.File
}

// Identity names the opened file: device, inode, size and change time.
// A file replaced on disk (a new package) has another.
func (p *Program) Identity() (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(p.f.Fd()), &st); err != nil {
		return "", fmt.Errorf("init program %s: stat: %w", p.path, err)
	}
	return fmt.Sprintf("%d:%d:%d:%d.%d", st.Dev, st.Ino, st.Size, st.Ctim.Sec, st.Ctim.Nsec), nil
}

func (p *Program) Close() {
	if p != nil && p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// Open finds the init beside the running binary (initPlaces), opens it
// and checks it: a regular, executable file and, when the jail runs as
// root, owned by root and writable by nobody else, since the jail execs it
// with the capabilities of every run's new namespaces. The version is
// checked by handshake once it runs (checkHello).
func Open() (*Program, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, &InitError{Path: InitName, Found: fmt.Sprintf("the running binary's own path is unknown: %v", err),
			Fix: "run scidex-jail from a file (with /proc mounted)"}
	}
	dir := filepath.Dir(exe)
	var tried []string
	for _, rel := range initPlaces {
		path := filepath.Join(dir, rel)
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			tried = append(tried, path)
			continue
		}
		if err != nil {
			return nil, &InitError{Path: path, Found: fmt.Sprintf("open: %v", err), Fix: "make it readable by the user running scidex-jail"}
		}
		p := &Program{path: path, f: os.NewFile(uintptr(fd), path)}
		if err := checkInitFile(p.f, path, os.Geteuid()); err != nil {
			p.Close()
			return nil, err
		}
		return p, nil
	}
	return nil, &InitError{Path: fmt.Sprintf("%s (nor %s)", tried[0], tried[1:]), Found: "not found",
		Fix: fmt.Sprintf("install it beside the jail: make build puts both into bin/, the Debian package puts it in /usr/libexec/scidex-jail/; it must be the %s of the same build (version %s)", InitName, buildversion.Version)}
}

// checkInitFile checks the opened init file as the user euid.
func checkInitFile(f *os.File, path string, euid int) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return &InitError{Path: path, Found: fmt.Sprintf("stat: %v", err), Fix: "make it readable by the user running scidex-jail"}
	}
	return checkInitStat(path, st.Mode, st.Uid, euid)
}

// checkInitStat is checkInitFile's rule on the file's mode and owner.
func checkInitStat(path string, mode, uid uint32, euid int) error {
	perm := fs.FileMode(mode & 0o7777)
	switch {
	case mode&unix.S_IFMT != unix.S_IFREG:
		return &InitError{Path: path, Found: "not a regular file", Fix: "install the " + InitName + " program there"}
	case mode&0o111 == 0:
		return &InitError{Path: path, Found: fmt.Sprintf("not executable (mode %v)", perm), Fix: "chmod 0755 " + path}
	case euid != 0:
		// Rootless: the user runs what they installed, as for the jail.
		return nil
	case uid != 0:
		return &InitError{Path: path, Found: fmt.Sprintf("owned by uid %d, and the jail runs as root", uid),
			Fix: "chown root:root " + path + " (whoever owns it could change what runs as every run's init)"}
	case mode&0o022 != 0:
		return &InitError{Path: path, Found: fmt.Sprintf("writable by group or others (mode %v), and the jail runs as root", perm),
			Fix: "chmod go-w " + path}
	}
	return nil
}

// checkHello checks the init's first message, m, or why none came (err):
// it must state the supervisor's own version. err io.EOF: the init ended
// (or the socket closed) before saying anything; another: what it said
// is no message of an init.
func checkHello(path string, m protocol.InitMsg, err error) error {
	fix := fmt.Sprintf("install the %s of this build (version %s) beside the jail: make build, or reinstall the package", InitName, buildversion.Version)
	h, hello := m.(*protocol.Hello)
	switch {
	case errors.Is(err, io.EOF):
		return &InitError{Path: path, Found: "it ended without stating its version: not a " + InitName + " of this jail", Fix: fix}
	case err != nil:
		return &InitError{Path: path, Found: fmt.Sprintf("its first line is not its version: %v; not a %s of this jail", err, InitName), Fix: fix}
	case !hello:
		return &InitError{Path: path, Found: fmt.Sprintf("its first message is %q, not its version: not a %s of this jail", m.Kind(), InitName), Fix: fix}
	case h.Version != buildversion.Version:
		return &InitError{Path: path, Found: fmt.Sprintf("version %q, and the jail is version %q", h.Version, buildversion.Version), Fix: fix}
	}
	return nil
}

// readHello reads the init's first message from r.
func readHello(r io.Reader) (protocol.InitMsg, error) {
	line, err := protocol.ReadLine(bufio.NewReader(r), protocol.MaxInitMsgBytes)
	if err != nil && !errors.Is(err, protocol.ErrLineTooLong) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, err
	}
	return protocol.DecodeInitMsg(line)
}

// InitCheck is what CheckInit found: the init's file and the version it
// stated.
type InitCheck struct {
	Path    string
	Version string
}

// CheckInit does what a run does with the init up to its config: finds,
// opens and checks the file, starts it with attr (a plan's namespaces,
// identity, capabilities: jail.Plan.ProcAttr), and reads its version. The
// error is an *InitError for the file or its version, else the spawn's.
func CheckInit(attr *syscall.SysProcAttr) (InitCheck, error) {
	prog, err := Open()
	if err != nil {
		return InitCheck{}, err
	}
	defer prog.Close()
	res := InitCheck{Path: prog.path}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return res, fmt.Errorf("socketpair: %w", err)
	}
	parent, child := os.NewFile(uintptr(fds[0]), "sync"), os.NewFile(uintptr(fds[1]), "sync-init")
	defer parent.Close()
	c, err := startInitChild(prog, attr, nil, child, childmode.Init.Argv())
	child.Close()
	if err != nil {
		return res, explainSpawnError(initExecError(prog.path, err))
	}
	// The end of the stream, right after the hello, ends the init: it
	// reads its config and gets none. A kill makes sure of it.
	defer c.kill()
	var m protocol.InitMsg
	got := make(chan error, 1)
	go func() {
		var err error
		m, err = readHello(parent)
		got <- err
	}()
	select {
	case err = <-got:
	case <-time.After(initHelloTimeout):
		// Its end of the socket closes with it: the read returns.
		c.kill()
		<-got
		return res, &InitError{Path: prog.path, Found: fmt.Sprintf("it did not state its version within %v", initHelloTimeout),
			Fix: "install the " + InitName + " of this build there"}
	}
	if h, ok := m.(*protocol.Hello); ok {
		res.Version = h.Version
	}
	return res, checkHello(prog.path, m, err)
}

// initHelloTimeout bounds CheckInit's wait for the hello of an init that
// neither speaks nor ends (a file that is some other program).
const initHelloTimeout = 10 * time.Second

// initExecError makes an exec of the init that the kernel refused (a file
// that is no program) an *InitError naming the file.
func initExecError(path string, err error) error {
	if errors.Is(err, syscall.ENOEXEC) || errors.Is(err, syscall.EACCES) {
		return &InitError{Path: path, Found: fmt.Sprintf("exec: %v", err), Fix: "install the " + InitName + " program of this build there"}
	}
	return err
}
