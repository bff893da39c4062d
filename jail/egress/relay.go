package egress

import (
	"errors"
	"io"
	"net"
	"os"
	"time"
)

// relayChunk is how much of a byte budget one copy takes at a time.
// io.Copy between two TCP sockets splices (no copy through user space)
// for as long as a chunk lasts, so a chunk is also the unit of work
// between two looks at the budget; what a connection holds and has not
// used goes back when it ends, so at most Open chunks of the budget
// are held at once.
const relayChunk = 256 << 10

// half is one direction's end: bytes copied, and why it stopped
// (ReasonNone: the sender closed its side).
type half struct {
	n      int64
	reason Reason
	err    error
}

// relay copies client <-> up, each way under its byte budget, the whole
// under the connection's time budget, then records the connection. TLS
// and anything else pass through as bytes: nothing is read, changed or
// kept.
func (e *Engine) relay(client, up net.Conn, pre []byte, rec *Conn, start time.Time) {
	defer e.untrack(up)
	deadline := start.Add(e.cfg.Budgets.ConnTime)
	_ = client.SetDeadline(deadline)
	_ = up.SetDeadline(deadline)
	// A direction that ends other than by its sender closing (a budget,
	// the deadline, a reset) ends the other too: its read would otherwise
	// wait on a peer that may never send again.
	both := func(h half) half {
		if h.reason != ReasonNone || h.err != nil {
			_ = client.Close()
			_ = up.Close()
		}
		return h
	}
	upDone := make(chan half, 1)
	go func() { upDone <- both(e.copyHalf(up, client, pre, e.up, ReasonUpload)) }()
	down := both(e.copyHalf(client, up, nil, e.down, ReasonDownload))
	upH := <-upDone
	rec.Up, rec.Down = upH.n, down.n
	o := outcome{Allowed, ReasonNone, ""}
	for _, h := range []half{upH, down} {
		switch h.reason {
		case ReasonUpload, ReasonDownload, ReasonTime:
			o = outcome{Cut, h.reason, cutDetail(h.reason, e.cfg.Budgets)}
		}
	}
	if o.decision == Allowed && e.ctx.Err() != nil {
		o.reason, o.detail = ReasonRunEnded, "open when the run ended"
	}
	e.record(rec, start, o)
}

func cutDetail(r Reason, b Budgets) string {
	switch r {
	case ReasonUpload:
		return "the run's upload budget of " + bytesText(b.Up) + " is spent"
	case ReasonDownload:
		return "the run's download budget of " + bytesText(b.Down) + " is spent"
	}
	return "open longer than a connection's time budget of " + b.ConnTime.String()
}

// copyHalf copies src to dst, first pre, under p; at src's end it closes
// dst's sending side, so that a client that half-closes (sends its
// request, then shuts down writing) still gets its answer.
func (e *Engine) copyHalf(dst, src net.Conn, pre []byte, p *pool, over Reason) half {
	var h half
	if len(pre) > 0 {
		got := p.take(int64(len(pre)))
		k, err := dst.Write(pre[:got])
		h.n += int64(k)
		if err != nil {
			return e.ended(h, err)
		}
		if got < int64(len(pre)) {
			h.reason = over
			return h
		}
	}
	for {
		chunk := p.take(relayChunk)
		if chunk == 0 {
			// The budget is spent, or held by other connections for now.
			// Wait for one more byte: at the sender's end the transfer
			// ended within budget; else try for room for it once more.
			var one [1]byte
			k, err := src.Read(one[:])
			if k == 0 {
				if errors.Is(err, io.EOF) {
					closeWrite(dst)
					return h
				}
				return e.ended(h, err)
			}
			if p.take(1) == 0 {
				h.reason = over
				return h
			}
			if _, err := dst.Write(one[:]); err != nil {
				return e.ended(h, err)
			}
			h.n++
			continue
		}
		k, err := io.Copy(dst, io.LimitReader(src, chunk))
		h.n += k
		p.giveBack(chunk - k)
		if err != nil {
			return e.ended(h, err)
		}
		if k < chunk {
			closeWrite(dst)
			return h
		}
	}
}

// ended says why a copy that failed stopped: the time budget (the
// deadline), or anything else (a reset, the other half closing both),
// which is the connection's ordinary end.
func (e *Engine) ended(h half, err error) half {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		h.reason = ReasonTime
	}
	h.err = err
	return h
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return itoa(n>>30) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + " KiB"
	}
	return itoa(n) + " bytes"
}
