package initconn

import (
	"bytes"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// TestSendConfigStdioGo: a slot's init gets its run's config and "go" in
// one write, the stdio attached, and only once its version was checked.
func TestSendConfigStdioGo(t *testing.T) {
	goLine, err := protocol.EncodeSupervisorMsg(protocol.Go{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &protocol.Config{Stdio: true, Command: []string{"/usr/bin/true"}, Hostname: "sandbox"}
	for _, c := range []struct {
		name  string
		hello bool
		want  []byte // nil: refused, nothing written
	}{
		{"version checked", true, append(protocol.EncodeConfig(cfg), goLine...)},
		{"version not checked", false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			sock := os.NewFile(uintptr(fds[0]), "sync")
			t.Cleanup(func() { sock.Close(); unix.Close(fds[1]) })
			null, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { null.Close() })
			n := int(null.Fd())
			conn := &Conn{sock: sock, hello: c.hello}
			err = conn.SendConfigStdioGo(cfg, [3]int{n, n, n})
			if (err == nil) != (c.want != nil) {
				t.Fatalf("SendConfigStdioGo() = %v, want an error %v", err, c.want == nil)
			}
			unix.Shutdown(fds[0], unix.SHUT_WR)
			buf := make([]byte, 64<<10)
			oob := make([]byte, unix.CmsgSpace(4*3))
			got, oobn, _, _, err := unix.Recvmsg(fds[1], buf, oob, unix.MSG_CMSG_CLOEXEC)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:got], c.want) {
				t.Errorf("SendConfigStdioGo() wrote %q, want %q", buf[:got], c.want)
			}
			var passed []int
			if oobn > 0 {
				msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range msgs {
					fds, err := unix.ParseUnixRights(&m)
					if err != nil {
						t.Fatal(err)
					}
					passed = append(passed, fds...)
				}
			}
			for _, fd := range passed {
				unix.Close(fd)
			}
			if want := map[bool]int{true: 3, false: 0}[c.want != nil]; len(passed) != want {
				t.Errorf("SendConfigStdioGo() passed %d descriptors, want %d", len(passed), want)
			}
		})
	}
}
