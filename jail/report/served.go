package report

// CleanupAfterReply is Report.Cleanup of a served run whose reply went
// once the analysis' tree was dead and its outputs listed and delivered,
// before its cleanup: a cleanup that then fails is a later event on the
// server's connection, and what it left is gc's.
const CleanupAfterReply = "after_reply"

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
	// CleanupsFailed: runs of this server whose cleanup after the reply
	// failed before this request was accepted (each logged, and sent to
	// its client as a "cleanup" event); what they left is gc's.
	CleanupsFailed int `json:"cleanups_failed,omitempty"`
}
