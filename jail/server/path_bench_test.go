package server_test

import (
	"testing"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/server"
)

// BenchmarkRequestPath is what the server does per request before the
// run's first kernel object: decode, resolve, validate, look at the host,
// plan (issue 36's startup, validate and policy phases, without the lease).
func BenchmarkRequestPath(b *testing.B) {
	dir := b.TempDir()
	line := []byte(`{"op":"run","req":"r1","names":"keyword","run":{"id":"a1","cwd":"` + dir + `","command":["/usr/bin/true"],"tmp_root":"` + dir + `"}}`)
	for b.Loop() {
		req, err := server.DecodeRequest(line)
		if err != nil {
			b.Fatal(err)
		}
		spec, err := req.Run.Resolve(req.Over())
		if err != nil {
			b.Fatal(err)
		}
		s, err := spec.Validate()
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := jail.BuildPlan(s, jail.LookHost(&s.Spec)); err != nil {
			b.Fatal(err)
		}
	}
}
