package initconn_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// The init's life as a run drives it (jail/supervise's supervisor.go and events.go).
// It needs user namespaces and a leaf, so it is compiled, not run.
func Example() {
	var (
		plan *jail.Plan           // jail.BuildPlan's
		leaf *cgroupfs.Leaf       // the run's leaf, limits written (cgroupfs.Create)
		sigs <-chan os.Signal     // the run's signals, forwarded meanwhile
		take func(os.Signal) bool // keeps a cancel for later
	)
	prog, err := initconn.Open() // an *InitError names the file, what is wrong and the fix
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer prog.Close()
	attr := plan.ProcAttr()
	if fd, ok := leaf.FD(); ok { // v2: born in the leaf; v1: the Spawner's thread is in it
		attr.UseCgroupFD, attr.CgroupFD = true, fd
	}
	conn, sp, err := initconn.Start(prog, leaf, attr, nil) // nil: the supervisor's own stdio
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	err = conn.SendConfig(&plan.Init) // read by the init once it has said hello
	if err == nil {
		err = conn.AwaitHello(sigs, take) // the init's version, checked
	}
	if err == nil {
		err = conn.Send(protocol.Go{}) // only now may it start the target
	}
	if err != nil {
		conn.Abort() // no "go" was sent: no target ran
		return
	}
	for m := range conn.Msgs() { // started, exited, or error with its stage
		if _, ok := m.(*protocol.Exited); ok {
			break
		}
	}
	conn.Release() // the run directory is read: the init may exit
	<-conn.Done()
	end := conn.End() // its wait status and rusage
	if sp != nil {    // v1: the spawning thread leaves before the leaf can go
		err = sp.End(conn)
	}
	fmt.Println(end.WS.ExitStatus(), err)
}
