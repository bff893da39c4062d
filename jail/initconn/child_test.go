package initconn

import (
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/childmode"
)

// TestStartInitAboveChildFiles: the program is execed whatever its fd's
// number. syscall.ForkExec moves its error pipe in the child to the fd
// above the highest it passes; a program at that very number was
// overwritten there, and the child execed the pipe (EACCES), as a busy
// server's cold runs did about once in 1,500. Here /bin/true stands for
// the init, at fd 200, with the analysis' stderr at 199.
func TestStartInitAboveChildFiles(t *testing.T) {
	f, err := os.Open("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[int]*os.File{}
	at := func(fd int, src *os.File) *os.File {
		if err := unix.Dup3(int(src.Fd()), fd, unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		nf := os.NewFile(uintptr(fd), src.Name())
		files[fd] = nf
		return nf
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	prog := &Program{path: "/bin/true", f: at(200, f)}
	stdio := []*os.File{at(197, null), at(198, null), at(199, null)}
	sync := at(196, null)
	defer func() {
		for _, nf := range files {
			nf.Close()
		}
	}()
	// A low number free for ForkExec's pipe, below the child's fds.
	if fds, _ := os.ReadDir("/proc/self/fd"); len(fds) > 150 {
		t.Fatalf("the test process holds %d fds: no low one is free", len(fds))
	}
	c, err := startInitChild(prog, &syscall.SysProcAttr{}, stdio, sync, childmode.Init.Argv())
	if err != nil {
		t.Fatalf("start with the program at fd 200 and stderr at 199: %v", err)
	}
	<-c.done
	if !c.ws.Exited() || c.ws.ExitStatus() != 0 {
		t.Errorf("the program ended %v, want exit 0 (/bin/true)", c.ws)
	}
}
