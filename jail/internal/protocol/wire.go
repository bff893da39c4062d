package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxSignal is the highest signal number Linux has (SIGRTMAX).
const maxSignal = 64

// peekKind is the kind of the JSON object in line. Our encoders write it
// first, which is read without parsing the rest; else the whole line is
// parsed for it, ignoring the other fields. Either way the decoder of the
// kind parses the line again, strictly, and checks the kind it finds
// there (sameKind): a line naming two kinds is refused.
func peekKind(line []byte) (Kind, error) {
	if rest, ok := bytes.CutPrefix(line, []byte(`{"kind":"`)); ok {
		if i := bytes.IndexByte(rest, '"'); i > 0 && i+1 < len(rest) && (rest[i+1] == ',' || rest[i+1] == '}') {
			if k := Kind(rest[:i]); knownKind(k) {
				return k, nil
			}
		}
	}
	var k struct {
		Kind Kind `json:"kind"`
	}
	if err := json.Unmarshal(line, &k); err != nil {
		return "", err
	}
	return k.Kind, nil
}

func knownKind(k Kind) bool {
	switch k {
	case KindHello, KindError, KindStarted, KindExited, KindGo, KindKill, KindSignal:
		return true
	}
	return false
}

// decodeStrict decodes the one JSON value of line into v, refusing a
// field v does not have and anything after the value but white space.
func decodeStrict(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// sameKind checks that the kind a strict decoding found is the one the
// line was decoded as.
func sameKind(found, want Kind) error {
	if found != want {
		return fmt.Errorf("kind %q, then %q", want, found)
	}
	return nil
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
			return nil, fmt.Errorf("%w: over %d bytes", ErrLineTooLong, max)
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
