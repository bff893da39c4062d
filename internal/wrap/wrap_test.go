package wrap

import (
	"errors"
	"io/fs"
	"testing"
)

// TestWrap: the text is the one fmt.Errorf's %w gave, and the error
// unwraps to the one it wraps.
func TestWrap(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{Error("open /x", fs.ErrNotExist), "open /x: file does not exist"},
		{Around("open /x: ", fs.ErrNotExist, ": chmod o+x"), "open /x: file does not exist: chmod o+x"},
		{Error("outer", Error("inner", fs.ErrNotExist)), "outer: inner: file does not exist"},
	} {
		if c.err.Error() != c.want || !errors.Is(c.err, fs.ErrNotExist) {
			t.Errorf("%q: want %q, unwrapping to fs.ErrNotExist", c.err, c.want)
		}
	}
}
