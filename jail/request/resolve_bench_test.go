package request_test

import (
	"testing"

	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/request"
)

// BenchmarkResolve is a served run's request resolved into its spec (its
// profile looked up): the most of the startup phase (issue 36).
func BenchmarkResolve(b *testing.B) {
	dir := b.TempDir()
	r := request.Request{ID: "a1", Cwd: dir, TmpRoot: dir, Command: []string{"/usr/bin/true"}}
	for b.Loop() {
		if _, err := r.Resolve(option.Keyword); err != nil {
			b.Fatal(err)
		}
	}
}
