// Package wrap builds the errors that name what failed around the error
// that made it fail, as fmt.Errorf with %w does, for the packages on the
// init's path (jail/internal/initproc, jail/internal/protocol,
// internal/sysfile, internal/netif), which do without fmt: the init is
// exec'd for every run, and fmt with the reflection it brings is a third
// of its binary and its resident size. The package's Example runs these:
//
//	wrap.Error("mount /usr", err)           // "mount /usr: " + err.Error()
//	wrap.Around("open x: ", err, ": chmod") // "open x: " + err.Error() + ": chmod"
//
// errors.Is and errors.As see through both (Unwrap), as through %w.
package wrap

// wrapped is an error between two texts, the error it unwraps to.
type wrapped struct {
	before string
	err    error
	after  string
}

func (w *wrapped) Error() string { return w.before + w.err.Error() + w.after }
func (w *wrapped) Unwrap() error { return w.err }

// Error is err after what failed and a colon: fmt.Errorf("%s: %w", what, err).
func Error(what string, err error) error {
	return &wrapped{before: what + ": ", err: err}
}

// Around is err between before and after, as they are:
// fmt.Errorf(before+"%w"+after, err), the texts holding no verbs.
func Around(before string, err error, after string) error {
	return &wrapped{before: before, err: err, after: after}
}
