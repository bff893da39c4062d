package report

// Streams is what became of the analysis' stdout and stderr.
type Streams struct {
	Stdout Stream `json:"stdout"`
	Stderr Stream `json:"stderr"`
}

// Stream is one of the analysis' stdout and stderr as the jail relayed it
// to the caller (jail/relay).
type Stream struct {
	// Relayed: the jail copied the stream to the caller's descriptor
	// under its budget; false: the caller's (a terminal) was handed to
	// the analysis as it is, and nothing below is known.
	Relayed bool `json:"relayed"`
	// Merged: this is stderr, and the caller's stderr was the same open
	// file description as its stdout (`>>log 2>&1`): one stream, one
	// budget, reported under stdout.
	Merged    bool   `json:"merged,omitempty"`
	Bytes     int64  `json:"bytes"`     // what the analysis wrote
	Delivered int64  `json:"delivered"` // of those, what reached the caller
	Dropped   int64  `json:"dropped"`   // not delivered: over the budget
	Tail      string `json:"tail"`      // the stream's last bytes (at most 4 KiB), delivered or not, as UTF-8 with invalid bytes replaced
}
