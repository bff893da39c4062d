// Package server is scidex-jail serve: a long-lived supervisor that runs
// analyses on request, over JSON lines on its stdin/stdout or on a unix
// socket (docs/serve.md is the protocol and its security model).
//
// A run request carries the run as a request.Request, what `scidex-jail
// run` decodes its command line into (protocol 2); the server resolves
// it into a jail.Spec with request.Resolve, the same step `run` takes,
// and the reply is the run's report. A request it cannot run is answered
// with a typed event: bad_request naming the field to fix, refused with
// the reason (a full queue, the server ending), error for the host's
// failures. Runs go through supervise.RunWith, each with its own cancel channel and the
// analysis' stdio received with the request (SCM_RIGHTS). Slots (pool.go)
// are inits prepared ahead for the configured profiles, each used once;
// admission bounds the runs at once and the queue; every reply names its
// request.
//
// Usage, as the command line does it (the package's Example, compiled
// with its tests):
//
//	templates := []request.Request{{ID: "slot", Profile: "default", Cwd: "/", Command: []string{"/usr/bin/true"}}}
//	srv := server.New(server.Config{MaxRuns: 2, Queue: 64, Version: v,
//		Pool: server.PoolConfig{Templates: templates, PerTemplate: 1, Idle: 10 * time.Minute}})
//	defer srv.Shutdown()
//	srv.Serve(os.Stdin, os.Stdout) // or ServeSocket(l), l from Listen(path)
package server
