package jail

import (
	"strings"
	"testing"
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
