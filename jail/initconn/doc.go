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
// Usage, as a run does it:
//
//	prog, err := initconn.Open() // an *InitError names the file, what is wrong and the fix
//	defer prog.Close()
//	conn, sp, err := initconn.Start(prog, leaf, plan.ProcAttr())
//	err = conn.AwaitHello(sigs, take) // the init's version
//	err = conn.Send(config)
//	for m := range conn.Msgs() { ... }
//
// It needs what a run needs: user namespaces, and the cgroup leaf the
// caller made.
package initconn
