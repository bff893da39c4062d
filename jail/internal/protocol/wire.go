package protocol

import (
	"bufio"
	"errors"
	"io"
	"strconv"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// maxSignal is the highest signal number Linux has (SIGRTMAX).
const maxSignal = 64

// kindOf is the kind of the message in line: the string value of its
// first field, "kind", which every encoder here writes first; "" when the
// first field is another. The decoder of the kind then reads the whole
// line (decodeObject).
func kindOf(line []byte) (Kind, error) {
	r := reader{b: line}
	if r.next() != '{' {
		return "", r.mismatch("the message", "an object")
	}
	r.i++
	if r.next() != '"' {
		return "", nil
	}
	if key, err := r.rawString(); err != nil || key != "kind" {
		return "", err
	}
	if r.next() != ':' {
		return "", r.invalid("':'")
	}
	r.i++
	k, err := r.string(`"kind"`)
	return Kind(k), err
}

// decodeObject reads the one JSON object of line, of the given kind,
// calling field for each field but "kind", and refuses anything after it
// but white space. A second "kind" is refused: a line naming two kinds.
func decodeObject(line []byte, kind Kind, field func(r *reader, key string) error) error {
	r := reader{b: line}
	kinds := 0
	err := r.object("the message", func(key string) error {
		if key != "kind" {
			return field(&r, key)
		}
		k, err := r.string(`"kind"`)
		if kinds++; err == nil && kinds > 1 {
			err = errors.New("kind " + strconv.Quote(string(kind)) + ", then " + strconv.Quote(k))
		}
		return err
	})
	if err != nil {
		return err
	}
	return r.end()
}

// ErrLineTooLong is ReadLine's refusal of a line over its limit.
var ErrLineTooLong = errors.New("line too long")

// ReadLine reads one line of r, newline included (none at the end of the
// stream), refusing one longer than max bytes: the stream is then of no
// further use. At the end of the stream with nothing read it returns
// io.EOF.
func ReadLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, wrap.Around("", ErrLineTooLong, ": over "+strconv.Itoa(max)+" bytes")
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}
