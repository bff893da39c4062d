package relay

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// TestCut: what of a stream a budget delivers at once, keeps for the end
// and drops, whatever the sizes of the chunks it arrives in.
func TestCut(t *testing.T) {
	stream := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		budget  int64
		size    int
		chunk   int
		dropped int64
	}{
		{"no budget", 0, 100_000, 4096, 0},
		{"under", 64, 50, 7, 0},
		{"at", 64, 64, 64, 0},
		{"over by one", 64, 65, 10, 1},
		{"far over, small chunks", 64, 10_000, 3, 10_000 - 64},
		{"far over, one chunk", 64, 10_000, 10_000, 10_000 - 64},
		{"odd budget", 65, 1000, 33, 1000 - 65},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := stream(tc.size)
			c := newCut(tc.budget)
			var got []byte
			for p := in; len(p) > 0; {
				n := min(tc.chunk, len(p))
				got = append(got, c.head(p[:n])...)
				p = p[n:]
			}
			if d := c.dropped(); d != tc.dropped {
				t.Errorf("cut(%d of %d).dropped() = %d, want %d", tc.size, tc.budget, d, tc.dropped)
			}
			tail := c.tail()
			got = append(got, tail...)
			keep := int64(len(in)) - tc.dropped
			head := min(keep, tc.budget/2)
			if tc.budget == 0 {
				head = keep
			}
			want := append(append([]byte{}, in[:head]...), in[int64(len(in))-(keep-head):]...)
			if !bytes.Equal(got, want) {
				t.Errorf("cut(%d of %d) delivered %d bytes, want the first %d and the last %d", tc.size, tc.budget, len(got), head, keep-head)
			}
			if last, want := c.lastBytes(), in[max(0, len(in)-TailBytes):]; !bytes.Equal(last, want) {
				t.Errorf("cut(%d of %d).lastBytes() = %d bytes, want the stream's last %d", tc.size, tc.budget, len(last), len(want))
			}
			if tc.budget > 0 && int64(cap(c.ring.buf)) > tc.budget-tc.budget/2 {
				t.Errorf("cut(%d of %d) ring holds %d bytes, want at most the tail's %d", tc.size, tc.budget, cap(c.ring.buf), tc.budget-tc.budget/2)
			}
		})
	}
}

// TestDropMarker: the marker is one line of its own.
func TestDropMarker(t *testing.T) {
	m := dropMarker("stdout", 12345, 8<<20)
	if !strings.HasPrefix(m, "\n[scidex-jail: 12345 bytes") || !strings.HasSuffix(m, "]\n") || strings.Count(m, "\n") != 2 {
		t.Errorf("dropMarker = %q, want one line of its own naming 12345 bytes", m)
	}
}

// BenchmarkRelayCopy: 100 MiB written into a relay whose caller's end is
// a pipe read to its end, under the default budget (most of it dropped)
// and without one (all of it copied): the relay's cost per byte.
func BenchmarkRelayCopy(b *testing.B) {
	const total = 100 << 20
	null, err := os.Open(os.DevNull)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	chunk := make([]byte, 1<<20)
	for _, bc := range []struct {
		name   string
		budget int64
	}{{"budget 8M", 8 << 20}, {"no budget", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(total)
			for b.Loop() {
				pr, pw, err := os.Pipe()
				if err != nil {
					b.Fatal(err)
				}
				read := make(chan struct{})
				go func() { io.Copy(io.Discard, pr); close(read) }()
				r, err := New([3]*os.File{null, pw, null}, bc.budget)
				if err != nil {
					b.Fatal(err)
				}
				w := r.stdio[1]
				r.streams[0].w = nil
				for range total / len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						b.Fatal(err)
					}
				}
				w.Close()
				r.streams[1].w.Close()
				r.streams[1].w = nil
				if lost := r.Drain(); lost != nil {
					b.Fatal(lost)
				}
				pw.Close()
				<-read
				pr.Close()
			}
		})
	}
}
