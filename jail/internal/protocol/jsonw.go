package protocol

import (
	"strconv"
	"unicode/utf8"
)

// writer appends one JSON object to b, field by field, in the order the
// encoders call it: the wire's order. Nested objects and arrays of objects
// open and close in place. It writes what encoding/json would, less its
// HTML escapes (<, >, & stay as they are).
type writer struct {
	b     []byte
	first bool // no field yet in the innermost open object
}

func (w *writer) open() {
	w.b = append(w.b, '{')
	w.first = true
}

func (w *writer) close() {
	w.b = append(w.b, '}')
	w.first = false
}

// key starts the field k of the open object.
func (w *writer) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *writer) str(k, v string) {
	w.key(k)
	w.b = appendString(w.b, v)
}

func (w *writer) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *writer) bool(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// strs writes a list of strings, null for a nil one.
func (w *writer) strs(k string, v []string) {
	w.key(k)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendString(w.b, s)
	}
	w.b = append(w.b, ']')
}

// objects writes a list of n objects, null for a nil one (n < 0), each
// written by one(i) between its braces.
func (w *writer) objects(k string, n int, one func(i int)) {
	w.key(k)
	if n < 0 {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i := range n {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.open()
		one(i)
		w.close()
	}
	w.b = append(w.b, ']')
}

// line is the object written, as one line.
func (w *writer) line() []byte { return append(w.b, '\n') }

// appendString appends s as a JSON string: quotes and backslashes escaped,
// control characters as \n, \r, \t or \u00XX, bytes that are not UTF-8 as
// U+FFFD (as encoding/json: a line is always valid UTF-8).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		i++
	}
	return append(b, '"')
}
