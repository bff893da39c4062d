package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fsCheckout is a fake platform checkout, made the way the platform lays one
// out: data/ and docs/ the analysis may read, the API's source and the
// site it must not. Permissions are wide open on purpose (files 0666,
// directories 0777), so that every denial the tests see comes from the
// jail (mount view, Landlock), never from the host's file modes.
type fsCheckout struct {
	root    string // the checkout, given as --root
	tmpRoot string // --tmp-root, holding another analysis' run directory
	other   string // that other run directory
}

func newFSCheckout(t *testing.T) fsCheckout {
	t.Helper()
	c := fsCheckout{root: tmpRoot(t), tmpRoot: tmpRoot(t)}
	c.other = filepath.Join(c.tmpRoot, "scidex-analysis-other")
	files := map[string]string{
		filepath.Join(c.root, "data", "input.csv"):    "a,b\n1,2\n",
		filepath.Join(c.root, "data", "tool.sh"):      "#!/bin/sh\necho ran\n",
		filepath.Join(c.root, "docs", "readme.md"):    "# docs\n",
		filepath.Join(c.root, "api.py"):               "SECRET = 'api'\n",
		filepath.Join(c.root, "site", "index.html"):   "<html></html>\n",
		filepath.Join(c.other, "secret.txt"):          "another analysis' result\n",
		filepath.Join(c.tmpRoot, "host-tmp-file.txt"): "on the host's tmp\n",
	}
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"data", "docs", "site"} {
		fsChmod(t, filepath.Join(c.root, d), 0o777)
	}
	fsChmod(t, c.other, 0o777)
	for path := range files {
		fsChmod(t, path, 0o666)
	}
	fsChmod(t, filepath.Join(c.root, "data", "tool.sh"), 0o777)
	return c
}

func fsChmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// fsOutcome is what one probe ended with: 0 for success, a kernel errno, or
// one of the script's own negative codes below.
type fsOutcome int

// Outcomes the probe script reports that are not kernel errnos.
const (
	fsVisible     fsOutcome = -1 // a directory that must look empty is not
	fsWrongOutput fsOutcome = -2 // a program ran but printed something else
	fsNoErrno     fsOutcome = -3 // an exception without an errno
)

func (o fsOutcome) String() string {
	switch o {
	case 0:
		return "success"
	case fsVisible:
		return "visible (not empty)"
	case fsWrongOutput:
		return "ran with the wrong result"
	case fsNoErrno:
		return "error without errno"
	}
	return fmt.Sprintf("%s (%d)", unix.ErrnoName(syscall.Errno(o)), int(o))
}

// fsOutcomes is the set of outcomes a probe may legitimately have. Where two
// layers both deny (a read-only mount and Landlock) the kernel's order of
// checks decides which errno wins, and either is right.
type fsOutcomes []fsOutcome

func (e fsOutcomes) has(o fsOutcome) bool {
	for _, w := range e {
		if w == o {
			return true
		}
	}
	return false
}

func (e fsOutcomes) String() string {
	var s []string
	for _, o := range e {
		s = append(s, o.String())
	}
	return strings.Join(s, " or ")
}

func fsErr(errs ...syscall.Errno) fsOutcomes {
	var o fsOutcomes
	for _, e := range errs {
		o = append(o, fsOutcome(e))
	}
	return o
}

// The outcomes the contract expects. Each is exact: the kernel's order of
// checks is fixed, so a different errno means a layer changed. A write
// under a read-only mount is EROFS because the VFS checks the mount before
// Landlock's hooks run (for files the host's modes would let the analysis
// write: those modes are checked first); Landlock's denials are EACCES.
var (
	fsOK       = fsOutcomes{0}
	fsDenied   = fsErr(syscall.EACCES)
	fsAbsent   = fsErr(syscall.ENOENT)
	fsReadOnly = fsErr(syscall.EROFS)
	fsCrossDev = fsErr(syscall.EXDEV)
)

// fsProbe is one access the analysis attempts: a Python expression (paths
// already quoted into it) and the outcomes allowed.
type fsProbe struct {
	name string
	code string
	want fsOutcomes
}

// fsPy quotes s as a Python string literal (a JSON string is one).
func fsPy(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fsPrelude holds the helpers the probes call. Each probe runs inside
// check(), which prints one JSON line: {"name", "errno", "detail"}.
const fsPrelude = `
import json, os, socket, subprocess, sys
def read(p):
    with open(p, 'rb') as f:
        f.read(1)
def write(p):
    fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'x')
    finally:
        os.close(fd)
def trunc_open(p):
    os.close(os.open(p, os.O_WRONLY | os.O_TRUNC))
def empty(p):
    n = os.listdir(p)
    if n:
        raise OSError(-1, 'not empty: %r' % n)
def connect(p):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p)
    finally:
        s.close()
def script(p):
    with open(p, 'w') as f:
        f.write('#!/bin/sh\necho ran\n')
    os.chmod(p, 0o755)
def run(p):
    r = subprocess.run([p], capture_output=True)
    if r.returncode != 0 or r.stdout != b'ran\n':
        raise OSError(-2, 'exit %d, stdout %r, stderr %r' % (r.returncode, r.stdout, r.stderr))
def check(name, fn):
    detail = ''
    try:
        fn()
        e = 0
    except OSError as x:
        e = x.errno if x.errno is not None else -3
        detail = str(x)
    except Exception as x:
        e, detail = -3, repr(x)
    print(json.dumps({'name': name, 'errno': e, 'detail': detail}), flush=True)
`

// fsScript is the whole Python program: the prelude, then one check per
// probe, in order (later probes may use what earlier ones made).
func fsScript(probes []fsProbe) string {
	var b strings.Builder
	b.WriteString(fsPrelude)
	for _, p := range probes {
		b.WriteString("check(" + fsPy(p.name) + ", lambda: " + p.code + ")\n")
	}
	return b.String()
}

type fsResult struct {
	Name   string `json:"name"`
	Errno  int    `json:"errno"`
	Detail string `json:"detail"`
}

// fsParse reads the script's JSON lines by probe name.
func fsParse(t *testing.T, stdout string) map[string]fsResult {
	t.Helper()
	got := map[string]fsResult{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r fsResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("probe output line %q is not JSON: %v", line, err)
		}
		got[r.Name] = r
	}
	return got
}
