// Package server is scidex-jail serve: a long-lived supervisor that runs
// analyses on request, over JSON lines on its stdin/stdout or on a unix
// socket (docs/serve.md is the protocol and its security model).
//
// A request is what `scidex-jail run` takes; the command line turns it
// into a jail.Spec (Config.Parse), so that the same flags are checked by
// the same code with the same messages, and the reply is the run's report.
// Runs go through supervise.RunWith, each with its own cancel channel and the
// analysis' stdio received with the request (SCM_RIGHTS). Slots (pool.go)
// are inits prepared ahead for the configured profiles, each used once;
// admission bounds the runs at once and the queue; every reply names its
// request.
//
// Usage, as the command line does it (the package's Example, compiled
// with its tests):
//
//	srv := server.New(server.Config{MaxRuns: 2, Queue: 64, Parse: parse, Version: v, Pool: pool})
//	defer srv.Shutdown()
//	srv.Serve(os.Stdin, os.Stdout) // or ServeSocket(l), l from Listen(path)
package server
