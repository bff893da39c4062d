package server_test

import (
	"fmt"
	"os"
	"time"

	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/jail/server"
)

// The server as the command line runs it (cmd/scidex-jail/serve.go). Its
// runs need root or a delegated cgroup, so it is compiled, not run.
func Example() {
	// The slot profiles' runs: a request naming the profile.
	templates := []request.Request{{ID: "slot", Profile: "default", Cwd: "/", Command: []string{"/usr/bin/true"}}}
	l, err := server.Listen("/run/scidex-jail/serve.sock") // or nil: JSON lines on stdin and stdout
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	srv := server.New(server.Config{MaxRuns: 2, Queue: 64, Version: "dev",
		Pool: server.PoolConfig{Templates: templates, PerTemplate: 1, Idle: 10 * time.Minute}})
	defer srv.Shutdown() // cancels what runs and waits for it
	srv.ServeSocket(l)   // or srv.Serve(os.Stdin, os.Stdout)
}
