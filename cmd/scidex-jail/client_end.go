package main

import (
	"fmt"
)

// exitLost is run --server's exit status when the server accepted the
// run and the connection ended before its reply (the server was killed):
// the run may have started, and its outcome is unknown. Not 125, which
// says the run never started and nothing of it exists; beside 122 and
// 123 (a run whose outputs or report were not delivered, or went over
// their budget), below 124 (timeout(1)'s) and 125-127 (the jail's own
// failures), where no common tool puts a meaning.
const exitLost = 121

// ended is the error of a connection that ended before the run's reply,
// by what this client knows of the run then: before the server accepted
// the request, the run never started (the server writes accepted before
// it starts anything, in the same goroutine); after, it may have.
func (s *session) ended() error {
	switch {
	case !s.sent:
		return fmt.Errorf("--server %s: the connection ended before the server's hello: %w; nothing was sent, the run never started; the server's stderr says why", s.sock, *s.end)
	case !s.accepted:
		return fmt.Errorf("--server %s: the connection ended before the server accepted the run: %w; the run never started, nothing of it exists; the server's stderr says why", s.sock, *s.end)
	}
	return runLost{fmt.Errorf("--server %s: the connection ended after the server accepted the run, before its reply: %w; "+
		"the run may have started: the server died (its analysis died with it) or dropped the connection (it cancels the run); "+
		"no report came; `scidex-jail gc` removes what a killed server left; the server's stderr says why", s.sock, *s.end)}
}

// runLost is the end of a connection after the server accepted the run:
// run --server exits exitLost (exitStatus).
type runLost struct{ error }

func (e runLost) Unwrap() error { return e.error }
