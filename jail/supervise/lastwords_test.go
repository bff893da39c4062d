package supervise

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestLastWords: what a failed analysis said last, from its stderr.
func TestLastWords(t *testing.T) {
	long := strings.Repeat("x", 500)
	for _, tc := range []struct {
		name, stderr, want string
	}{
		{"traceback", "Traceback (most recent call last):\n  File \"/a.py\", line 3, in <module>\n    d['dose']\n    ~^^^^^^^^\nKeyError: 'dose'\n", "KeyError: 'dose'"},
		{"permission", "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nPermissionError: [Errno 13] Permission denied: '/etc/shadow'\n", "PermissionError: [Errno 13] Permission denied: '/etc/shadow'"},
		{"dotted, no message", "Traceback (most recent call last):\n  File \"x\", line 1\nmod.sub.Error\n", "mod.sub.Error"},
		{"printed after the traceback", "Traceback (most recent call last):\n  File \"x\", line 1\nValueError: bad\ncleanup done: 3 files\n", "ValueError: bad"},
		{"chained: the last traceback", "Traceback (most recent call last):\nKeyError: 'a'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"x\", line 2\nRuntimeError: wrapped\n", "RuntimeError: wrapped"},
		{"syntax", "  File \"/a.py\", line 1\n    def (\n        ^\nSyntaxError: invalid syntax\n", "SyntaxError: invalid syntax"},
		{"indentation", "  File \"/a.py\", line 2\n    x\nIndentationError: unexpected indent\n", "IndentationError: unexpected indent"},
		{"not python", "reading input\nerror: no such column: dose\n\n  \n", "error: no such column: dose"},
		{"crlf", "step 1\r\nfatal: out of cheese\r\n", "fatal: out of cheese"},
		{"nothing", "", ""},
		{"blank", "\n \n\t\n", ""},
		{"control characters", "boom \x1b[31mred\x1b[0m\rover\x07 \u202eevil\n", `boom \x1b[31mred\x1b[0m\x0dover\x07 \u202eevil`},
		{"invalid utf-8", "bad \xff byte\n", "bad \uFFFD byte"},
		{"bounded", long + "\n", strings.Repeat("x", MaxLastWords-1) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastWords([]byte(tc.stderr)); got != tc.want {
				t.Errorf("lastWords(%q) = %q, want %q", tc.stderr, got, tc.want)
			}
		})
	}
}

// FuzzLastWords: whatever an analysis writes to stderr, its last words are
// valid UTF-8, one line without a control or format character, and at most
// MaxLastWords characters.
func FuzzLastWords(f *testing.F) {
	for _, s := range []string{"Traceback (most recent call last):\nKeyError: 'x'\n", "  File \"a\", line 1\nSyntaxError: x\n", "\x1b[2J\r\n", "\xff\xfe", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w := lastWords(b)
		if !utf8.ValidString(w) || utf8.RuneCountInString(w) > MaxLastWords {
			t.Fatalf("lastWords(%q) = %q: not UTF-8 or longer than %d", b, w, MaxLastWords)
		}
		for _, r := range w {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
				t.Fatalf("lastWords(%q) = %q, holding %U", b, w, r)
			}
		}
	})
}
