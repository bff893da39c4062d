package main

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"

	"github.com/scidex/scidex-jail/jail/server"
)

// checkServer refuses a server that runs as neither this process's uid
// nor root, before anything is sent to it. The server is handed the
// client's stdin, stdout and stderr and its report is taken as the run's:
// a process of another account listening on a socket in a shared
// directory (or on a path the client was misled to) would get them and
// could forge the report. The server checks its clients the same way
// (docs/serve.md). SO_PEERCRED on a connected socket is the effective
// uid of the process that called listen(2), fixed then: a later setuid
// of that process does not change it.
func checkServer(sock string, conn *net.UnixConn) error {
	cred, err := server.PeerCred(conn)
	if err != nil {
		return fmt.Errorf("--server %s: read the server's credentials (SO_PEERCRED): %w", sock, err)
	}
	if server.Trusted(cred.Uid) {
		return nil
	}
	return fmt.Errorf("--server %s: the server there runs as %s (pid %d), neither this user (uid %d) nor root: "+
		"nothing was sent to it (it would get this process's stdin, stdout and stderr and could forge the report); "+
		"use a server of your own account or root's, on a socket in a directory only its owner can write",
		sock, userOf(cred.Uid), cred.Pid, os.Getuid())
}

// userOf is "uid N", with the user's name when the passwd database
// has one.
func userOf(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return "uid " + id + " (" + u.Username + ")"
	}
	return "uid " + id
}
