package protocol

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// reader reads the JSON of one line, value by value, as the decoders ask
// for them: each names the value it wants and where it goes (into, for
// the error), and gets an error naming what it found instead. It reads
// the subset the encoders write (objects, arrays, strings, integers,
// booleans, null for a nil list or pointer) and skips any JSON value
// where a decoder asks it to (the hello's fields of other versions).
type reader struct {
	b []byte
	i int    // the next byte to read
	s string // b as a string, made at the first plain string read: plain strings are its substrings
}

// maxDepth bounds the nesting of a value skipped (skip).
const maxDepth = 32

func (r *reader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\r', '\n':
			r.i++
		default:
			return
		}
	}
}

// next is the first byte of the next value, past white space; 0 at the
// end of the line.
func (r *reader) next() byte {
	r.space()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// invalid is the error of a byte that is not what the grammar wants here.
func (r *reader) invalid(want string) error {
	if r.i >= len(r.b) {
		return errors.New("unexpected end of the line, want " + want)
	}
	c, found := r.b[r.i], ""
	if c >= 0x20 && c < 0x7f {
		found = "'" + string(rune(c)) + "'"
	} else {
		found = "byte 0x" + strconv.FormatUint(uint64(c), 16)
	}
	return errors.New("invalid character " + found + " at byte " + strconv.Itoa(r.i) + ", want " + want)
}

// mismatch is the error of a value of another type than the one wanted.
func (r *reader) mismatch(into, want string) error {
	var found string
	switch c := r.next(); {
	case c == '{':
		found = "object"
	case c == '[':
		found = "array"
	case c == '"':
		found = "string"
	case c == '-' || c >= '0' && c <= '9':
		end := r.i
		for end < len(r.b) && bytes.IndexByte([]byte("0123456789+-.eE"), r.b[end]) >= 0 {
			end++
		}
		found = "number " + string(r.b[r.i:end])
	case bytes.HasPrefix(r.b[r.i:], []byte("true")) || bytes.HasPrefix(r.b[r.i:], []byte("false")):
		found = "bool"
	case bytes.HasPrefix(r.b[r.i:], []byte("null")):
		found = "null"
	default:
		return r.invalid(want)
	}
	return errors.New("cannot unmarshal " + found + " into " + into + ", want " + want)
}

// end refuses anything after the line's value but white space.
func (r *reader) end() error {
	if r.next() != 0 {
		return errors.New(r.invalid("the end of the line").Error() + " after top-level value: more than one JSON value on the line")
	}
	return nil
}

func unknownField(key string) error { return errors.New("unknown field " + strconv.Quote(key)) }

// object reads an object, calling field for each of its fields with the
// reader at the field's value, which field must read.
func (r *reader) object(into string, field func(key string) error) error {
	if r.next() != '{' {
		return r.mismatch(into, "an object")
	}
	r.i++
	if r.next() == '}' {
		r.i++
		return nil
	}
	for {
		if r.next() != '"' {
			return r.invalid("a field name")
		}
		key, err := r.rawString()
		if err != nil {
			return err
		}
		if r.next() != ':' {
			return r.invalid("':'")
		}
		r.i++
		if err := field(key); err != nil {
			return err
		}
		switch r.next() {
		case ',':
			r.i++
		case '}':
			r.i++
			return nil
		default:
			return r.invalid("',' or '}'")
		}
	}
}

// list reads an array, calling elem for each value.
func (r *reader) list(into string, elem func() error) error {
	if r.next() != '[' {
		return r.mismatch(into, "an array")
	}
	r.i++
	if r.next() == ']' {
		r.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch r.next() {
		case ',':
			r.i++
		case ']':
			r.i++
			return nil
		default:
			return r.invalid("',' or ']'")
		}
	}
}

// null reads a null if that is what comes next.
func (r *reader) null() bool {
	if r.next() == 'n' && bytes.HasPrefix(r.b[r.i:], []byte("null")) {
		r.i += 4
		return true
	}
	return false
}

func (r *reader) boolean(into string) (bool, error) {
	for _, v := range []bool{true, false} {
		if lit := strconv.FormatBool(v); r.next() == lit[0] && bytes.HasPrefix(r.b[r.i:], []byte(lit)) {
			r.i += len(lit)
			return v, nil
		}
	}
	return false, r.mismatch(into, "true or false")
}

// integer reads an integer from min to max: no fraction, no exponent.
func (r *reader) integer(into string, min, max int64) (int64, error) {
	c := r.next()
	if c != '-' && (c < '0' || c > '9') {
		return 0, r.mismatch(into, "an integer")
	}
	start := r.i
	if c == '-' {
		r.i++
	}
	digits := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	if r.i == digits || r.b[digits] == '0' && r.i-digits > 1 {
		return 0, r.invalid("a digit")
	}
	if r.i < len(r.b) && (r.b[r.i] == '.' || r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i = start
		return 0, r.mismatch(into, "an integer")
	}
	text := string(r.b[start:r.i])
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < min || n > max {
		return 0, errors.New("cannot unmarshal number " + text + " into " + into + ", want " +
			strconv.FormatInt(min, 10) + " to " + strconv.FormatInt(max, 10))
	}
	return n, nil
}

// int reads a Go int.
func (r *reader) int(into string) (int, error) {
	n, err := r.integer(into, math.MinInt, math.MaxInt)
	return int(n), err
}

func (r *reader) string(into string) (string, error) {
	if r.next() != '"' {
		return "", r.mismatch(into, "a string")
	}
	return r.rawString()
}

// strings reads a list of strings, nil for null.
func (r *reader) strings(into string) ([]string, error) {
	if r.null() {
		return nil, nil
	}
	out := []string{}
	err := r.list(into, func() error {
		s, err := r.string(into)
		out = append(out, s)
		return err
	})
	return out, err
}

// rawString reads the string at r.i (its opening quote). Bytes that are
// not UTF-8 and escaped lone surrogates read as U+FFFD, as encoding/json
// reads them. A string of plain ASCII (no escape, no control character),
// most of a config's (paths, names, the environment), is a substring of
// the line copied once as a string (r.s), not a string of its own: in a
// slot's init at the request, a run's part of the config decoded in 54-55
// us, 38-44 us so (three sittings of 100 slot runs each way, marks around
// the decode). The copy is the reader's own, so a caller's buffer that
// is reused after the decode (bufio's) changes none of it; the strings
// keep the line's bytes alive while they live (a line is at most
// MaxConfigBytes).
func (r *reader) rawString() (string, error) {
	r.i++
	start := r.i
	for j := r.i; j < len(r.b); j++ {
		c := r.b[j]
		if c == '"' {
			if r.s == "" {
				r.s = string(r.b)
			}
			r.i = j + 1
			return r.s[start:j], nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	var out []byte
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			r.i++
			return string(out), nil
		case c == '\\':
			var err error
			if out, err = r.escape(out); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", r.invalid("a character of a string (control characters escaped)")
		case c < utf8.RuneSelf:
			out = append(out, c)
			r.i++
		default:
			rn, n := utf8.DecodeRune(r.b[r.i:])
			out = utf8.AppendRune(out, rn)
			r.i += n
		}
	}
	return "", r.invalid("the end of a string")
}

// escape appends the character of the escape at r.i (its backslash).
func (r *reader) escape(out []byte) ([]byte, error) {
	r.i++
	if r.i >= len(r.b) {
		return nil, r.invalid("an escape")
	}
	if i := bytes.IndexByte([]byte(`"\/bfnrt`), r.b[r.i]); i >= 0 {
		r.i++
		return append(out, "\"\\/\b\f\n\r\t"[i]), nil
	}
	if r.b[r.i] != 'u' {
		return nil, r.invalid(`an escape (one of "\/bfnrtu)`)
	}
	rn, ok := r.hex4(r.i + 1)
	if !ok {
		return nil, r.invalid(`four hexadecimal digits after \u`)
	}
	r.i += 5
	if utf16.IsSurrogate(rn) {
		low, ok := r.hex4(r.i + 2)
		if dec := utf16.DecodeRune(rn, low); ok && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' && dec != utf8.RuneError {
			r.i += 6
			return utf8.AppendRune(out, dec), nil
		}
		rn = utf8.RuneError
	}
	return utf8.AppendRune(out, rn), nil
}

// hex4 is the value of the four hexadecimal digits at i.
func (r *reader) hex4(i int) (rune, bool) {
	if i < 0 || i+4 > len(r.b) {
		return 0, false
	}
	var v rune
	for _, c := range r.b[i : i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | rune(d)
	}
	return v, true
}

// skip reads any one JSON value, at most maxDepth deep, and drops it.
func (r *reader) skip(depth int) error {
	if depth > maxDepth {
		return errors.New("a value nested over " + strconv.Itoa(maxDepth) + " deep")
	}
	switch c := r.next(); {
	case c == '{':
		return r.object("a field", func(string) error { return r.skip(depth + 1) })
	case c == '[':
		return r.list("a field", func() error { return r.skip(depth + 1) })
	case c == '"':
		_, err := r.rawString()
		return err
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	case r.null():
		return nil
	}
	_, err := r.boolean("a field")
	return err
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *reader) number() error {
	digits := func() int {
		start := r.i
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
		}
		return r.i - start
	}
	if r.b[r.i] == '-' {
		r.i++
	}
	start := r.i
	if n := digits(); n == 0 || n > 1 && r.b[start] == '0' {
		return r.invalid("a digit")
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if digits() == 0 {
			return r.invalid("a digit")
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			return r.invalid("a digit")
		}
	}
	return nil
}
