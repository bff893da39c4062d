package report

// Served is how a run of scidex-jail serve was admitted: the server's
// figures at the moment its request was accepted, so that a slow run can
// be told from a run that waited (its wait is the queued phase).
type Served struct {
	MaxRuns int `json:"max_runs"` // runs at once (serve --max-runs)
	Queue   int `json:"queue"`    // requests that may wait beyond them (serve --queue)
	Running int `json:"running"`  // runs holding a place when the request was accepted
	// QueuedAhead: requests accepted before this one and still waiting
	// for a place when it was accepted. Places go to waiters in the order
	// they came (Go's channel senders), so at most this many went first.
	QueuedAhead int `json:"queued_ahead"`
}
