// Package initconn is the supervisor's side of the init: the init program
// found beside the jail and checked before it is trusted (Open: owned by
// root and not writable by others when the jail runs as root, the same
// version, by handshake), the init started from that open file as PID 1
// of the run's new namespaces (Start: with SysProcAttr's clone flags; on
// cgroup v1 forked by a thread that first entered the run's leaf, the
// Spawner), and the connection to it: one socket carrying the config
// there and the init's messages back (Conn: Send, Msgs, Forward,
// KillTree, Release, Abort, End).
//
// The init is the supervisor's own child, held by its pid and reaped by
// one goroutine; a signal goes to it only under the lock the reaping
// takes, so it never reaches a reused pid.
//
// Usage, as a run does it (the package's Example, compiled with its
// tests):
//
//	prog, err := initconn.Open() // an *InitError names the file, what is wrong and the fix
//	defer prog.Close()
//	attr := plan.ProcAttr()
//	if fd, ok := leaf.FD(); ok { // v2: born in the leaf; v1: the Spawner's thread is in it
//		attr.UseCgroupFD, attr.CgroupFD = true, fd
//	}
//	conn, sp, err := initconn.Start(prog, leaf, attr, nil) // nil: the supervisor's own stdio
//	err = conn.SendConfig(&plan.Init)                      // read by the init once it has said hello
//	err = conn.AwaitHello(sigs, take)                      // the init's version, checked
//	err = conn.Send(protocol.Go{})                         // only now may it start the target
//	for m := range conn.Msgs() { ... }                     // started, exited, or error with its stage
//	conn.Release()                                         // the run directory is read: the init may exit
//	<-conn.Done()
//	end := conn.End() // its wait status and rusage
//	err = sp.End(conn) // v1 (sp != nil): the spawning thread leaves before the leaf can go
//
// It needs what a run needs: user namespaces, and the cgroup leaf the
// caller made.
package initconn
