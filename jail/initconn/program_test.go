package initconn

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/buildversion"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// TestCheckInitStat: the init's file is refused unless it is a regular
// executable file and, for a jail running as root, root's and writable by
// no one else; the error says what was found.
func TestCheckInitStat(t *testing.T) {
	const reg = unix.S_IFREG
	for _, c := range []struct {
		name      string
		mode, uid uint32
		euid      int
		want      string // in the error's Found; "" means accepted
	}{
		{"root's 0755, as root", reg | 0o755, 0, 0, ""},
		{"root's 0500, as root", reg | 0o500, 0, 0, ""},
		{"another owner, as root", reg | 0o755, 1000, 0, "owned by uid 1000"},
		{"group-writable, as root", reg | 0o775, 0, 0, "writable by group or others"},
		{"world-writable, as root", reg | 0o757, 0, 0, "writable by group or others"},
		{"not executable", reg | 0o644, 0, 0, "not executable"},
		{"a directory", unix.S_IFDIR | 0o755, 0, 0, "not a regular file"},
		{"the user's own, rootless", reg | 0o755, 1000, 1000, ""},
		{"group-writable, rootless", reg | 0o775, 1000, 1000, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkInitStat("/x/scidex-jail-init", c.mode, c.uid, c.euid)
			var ie *InitError
			switch {
			case c.want == "" && err != nil:
				t.Errorf("checkInitStat(%o, uid %d, euid %d) = %v, want nil", c.mode, c.uid, c.euid, err)
			case c.want != "" && (!errors.As(err, &ie) || !strings.Contains(ie.Found, c.want) || ie.Fix == ""):
				t.Errorf("checkInitStat(%o, uid %d, euid %d) = %v, want an *InitError finding %q, with a fix", c.mode, c.uid, c.euid, err, c.want)
			}
		})
	}
}

// TestCheckHello: only a hello stating this build's version lets the run
// go on.
func TestCheckHello(t *testing.T) {
	for _, c := range []struct {
		name string
		m    protocol.InitMsg
		err  error  // why no message came
		want string // in Found; "" means accepted
	}{
		{"same version", &protocol.Hello{Version: buildversion.Version}, nil, ""},
		{"another version", &protocol.Hello{Version: buildversion.Version + "-other"}, nil, "version"},
		{"no version", &protocol.Hello{}, nil, "version"},
		{"another message first", &protocol.SetupFailed{}, nil, "first message"},
		{"ended silently", nil, io.EOF, "ended without"},
		{"malformed", nil, errors.New(`init message of unknown kind "x"`), "not its version: init message of unknown kind"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkHello("/x/scidex-jail-init", c.m, c.err)
			var ie *InitError
			switch {
			case c.want == "" && err != nil:
				t.Errorf("checkHello(%+v, %v) = %v, want nil", c.m, c.err, err)
			case c.want != "" && (!errors.As(err, &ie) || !strings.Contains(ie.Found, c.want)):
				t.Errorf("checkHello(%+v, %v) = %v, want an *InitError finding %q", c.m, c.err, err, c.want)
			}
		})
	}
}

// TestHelloLine: the init's hand-made first line decodes as the hello the
// supervisor checks, whatever the version string holds.
func TestHelloLine(t *testing.T) {
	for _, v := range []string{"dev", "0~git20261125.3be00d1+dirty", "v1.2.3-4-gabc", "we\"ird\\ \n\x00 é"} {
		line := protocol.HelloLine(v)
		m, err := readHello(bytes.NewReader(line))
		if h, ok := m.(*protocol.Hello); err != nil || !ok || h.Version != v || line[len(line)-1] != '\n' || bytes.Count(line, []byte("\n")) != 1 {
			t.Errorf("HelloLine(%q) = %q, decoded %#v, %v; want one line holding kind hello and version %q", v, line, m, err, v)
		}
	}
}
