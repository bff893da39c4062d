package relay

import (
	"bytes"
	"fmt"

	"github.com/scidex/scidex-jail/jail/report"
)

// TailBytes is how much of the end of each stream the report keeps
// (report.Stream's tail), whether or not the stream went over its budget.
const TailBytes = 4 << 10

// cut decides what of one stream reaches the caller under a budget of
// bytes: the head (the first half) as it arrives, the tail (the last half)
// kept in a ring and delivered at the end, the middle counted and dropped.
// It keeps the stream's last TailBytes apart for the report. A cut is used
// by one goroutine, the stream's copier.
type cut struct {
	budget   int64 // 0: no budget, everything is head
	headLeft int64 // bytes the head may still take
	past     int64 // bytes past the head
	ring     ring  // the last bytes past the head, at most the tail's half
	last     ring  // the stream's last TailBytes
}

func newCut(budget int64) cut {
	c := cut{budget: budget, last: ring{max: TailBytes}}
	if budget > 0 {
		c.headLeft = budget / 2
		c.ring.max = int(budget - budget/2)
	}
	return c
}

// head takes a chunk the analysis wrote and returns the part of it to
// deliver now.
func (c *cut) head(p []byte) []byte {
	c.last.write(p)
	if c.budget == 0 {
		return p
	}
	n := min(int64(len(p)), c.headLeft)
	c.headLeft -= n
	if rest := p[n:]; len(rest) > 0 {
		c.past += int64(len(rest))
		c.ring.write(rest)
	}
	return p[:n]
}

// dropped is how many bytes were neither head nor tail.
func (c *cut) dropped() int64 { return c.past - int64(c.ring.len()) }

// tail is what to deliver at the end: the bytes past the head still in the
// ring.
func (c *cut) tail() []byte { return c.ring.bytes() }

// lastBytes is the stream's last TailBytes, delivered or not.
func (c *cut) lastBytes() []byte { return c.last.bytes() }

// dropMarker is the one line the caller's stream gets where bytes were
// dropped. It starts on a line of its own: the head may end mid-line.
func dropMarker(name string, dropped, budget int64) string {
	return fmt.Sprintf("\n[scidex-jail: %d bytes of the analysis' %s dropped here: over its budget of %d bytes (stdio_bytes); the last %d follow]\n", dropped, name, budget, budget-budget/2)
}

// ring keeps the last max bytes written to it. Its buffer grows to max
// only as bytes come: a stream that stays small costs little.
type ring struct {
	max   int
	buf   []byte
	start int // of the oldest byte, once the buffer is full
}

func (r *ring) write(p []byte) {
	if r.max == 0 {
		return
	}
	if len(p) >= r.max {
		if cap(r.buf) < r.max {
			r.buf = make([]byte, 0, r.max)
		}
		r.buf = append(r.buf[:0], p[len(p)-r.max:]...)
		r.start = 0
		return
	}
	if room := r.max - len(r.buf); room > 0 {
		n := min(room, len(p))
		if len(r.buf)+n > cap(r.buf) {
			// Grown by hand: append's doubling would overshoot max.
			grown := make([]byte, len(r.buf), min(r.max, max(2*cap(r.buf), len(r.buf)+n)))
			copy(grown, r.buf)
			r.buf = grown
		}
		r.buf = append(r.buf, p[:n]...)
		p = p[n:]
	}
	// Full: overwrite from the oldest byte on, wrapping.
	for len(p) > 0 {
		n := copy(r.buf[r.start:], p)
		p = p[n:]
		r.start = (r.start + n) % r.max
	}
}

func (r *ring) len() int { return len(r.buf) }

// bytes is the ring's content, oldest first, in a new slice.
func (r *ring) bytes() []byte {
	out := make([]byte, 0, len(r.buf))
	return append(append(out, r.buf[r.start:]...), r.buf[:r.start]...)
}

// Facts is what the report and the notes take of the relay, once
// it has drained.
type Facts struct {
	Streams report.Streams
	Budget  int64
	// Stderr is the last bytes of the stream stderr went to (stdout's,
	// merged); nil: not relayed.
	Stderr []byte
}

// Facts is what became of the streams; called after Drain.
func (r *Relay) Facts() Facts {
	var f Facts
	if r == nil {
		return f
	}
	for _, s := range r.streams {
		st := report.Stream{Relayed: true, Bytes: s.read.Load(), Delivered: s.written, Dropped: s.cut.dropped(), Tail: tailOf(s.cut.lastBytes())}
		f.Budget = s.cut.budget
		switch s.fd {
		case 1:
			f.Streams.Stdout = st
			if r.merged {
				f.Stderr = s.cut.lastBytes()
				f.Streams.Stderr = report.Stream{Relayed: true, Merged: true}
			}
		case 2:
			f.Streams.Stderr = st
			f.Stderr = s.cut.lastBytes()
		}
	}
	return f
}

// Truncations names each stream that went over its budget, for the notes.
func (f Facts) Truncations() []string {
	var out []string
	for _, s := range []struct {
		name string
		st   report.Stream
	}{{"stdout", f.Streams.Stdout}, {"stderr", f.Streams.Stderr}} {
		if s.st.Dropped > 0 {
			name := s.name
			if s.name == "stdout" && f.Streams.Stderr.Merged {
				name = "stdout and stderr"
			}
			out = append(out, fmt.Sprintf("%s truncated: %d of its %d bytes dropped, over the budget of %d", name, s.st.Dropped, s.st.Bytes, f.Budget))
		}
	}
	return out
}

// tailOf is the report's text of a stream's last bytes: UTF-8, an invalid
// byte (or a character cut at the tail's start) replaced.
func tailOf(b []byte) string { return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))) }
