package server

import (
	"testing"
)

// BenchmarkDecodeRequest is a served run's request line as the Python
// client writes it, read from its connection and decoded: the server's
// work on a request before its run's startup phase begins (issue 36).
func BenchmarkDecodeRequest(b *testing.B) {
	line := []byte(`{"op":"run","req":"r1","run":{"id":"a1","command":["/usr/bin/true"],"cwd":"/work/x","tmp_root":"/tmp"},"stdio":3,"names":"keyword"}` + "\n")
	lr := newLineReader(lines(line))
	for b.Loop() {
		l, err := lr.next()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeRequest(l); err != nil {
			b.Fatal(err)
		}
	}
}

// lines reads as one line after another, one per Read, as a client's
// requests come one sendmsg each.
type lines []byte

func (l lines) Read(p []byte) (int, error) { return copy(p, l), nil }
