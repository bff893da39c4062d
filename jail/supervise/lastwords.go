package supervise

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLastWords bounds the last words in the completion notes, in
// characters (an escaped character counts its escape).
const MaxLastWords = 200

// pythonException is the last line of a Python traceback: the exception's
// (dotted) class name at the start of a line, then its message.
var pythonException = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*(: .*)?$`)

// pythonSyntax is the last line of the block Python prints for a script it
// cannot compile, which has no "Traceback" line.
var pythonSyntax = regexp.MustCompile(`^(SyntaxError|IndentationError|TabError)(: .*)?$`)

const traceback = "Traceback (most recent call last):"

// lastWords is what a failed analysis said last, from the tail of its
// stderr: for Python, the exception line of its last traceback (or of a
// SyntaxError block); otherwise the last non-empty line. It is bounded
// and escaped for one log line; "": nothing was said.
func lastWords(stderr []byte) string {
	lines := strings.Split(strings.ToValidUTF8(string(stderr), "\uFFFD"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " \t\r")
	}
	words := ""
	if at := lastIndex(lines, func(l string) bool { return l == traceback }); at >= 0 {
		if e := lastIndex(lines[at+1:], pythonException.MatchString); e >= 0 {
			words = lines[at+1+e]
		}
	}
	if words == "" {
		if e := lastIndex(lines, pythonSyntax.MatchString); e >= 0 {
			words = lines[e]
		}
	}
	if words == "" {
		if e := lastIndex(lines, func(l string) bool { return strings.TrimSpace(l) != "" }); e >= 0 {
			words = strings.TrimSpace(lines[e])
		}
	}
	return oneLine(words, MaxLastWords)
}

func lastIndex(lines []string, match func(string) bool) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if match(lines[i]) {
			return i
		}
	}
	return -1
}

// oneLine is s safe for one line of a log: control and format characters
// (a terminal's escapes, a carriage return, a bidi override) escaped as Go
// writes them, then at most max characters, an ellipsis saying it was cut.
func oneLine(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if utf8.RuneCountInString(out) <= max {
		return out
	}
	runes := []rune(out)[:max-1]
	return string(runes) + "…"
}
