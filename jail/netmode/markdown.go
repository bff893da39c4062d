package netmode

import (
	"strings"

	"github.com/scidex/scidex-jail/jail/promise"
)

// MarkdownTable is docs/security.md's table of the network modes, made
// from the rows (a test holds the document to it): paste its output over
// the document's after changing a row.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| mode | what the run gets | its own network namespace | sockets (seccomp) | TCP ports (Landlock) |")
	for _, p := range promise.NetPromises() {
		b.WriteString(" `" + string(p) + "` held by |")
	}
	b.WriteString("\n|---|---|---|---|---|" + strings.Repeat("---|", len(promise.NetPromises())) + "\n")
	for _, m := range All {
		ports := "none taken"
		if m.TCPPorts {
			ports = "connect to the allowed ports only, bind none"
		}
		b.WriteString("| `" + string(m.Name) + "` | " + m.Doc + " | " + namespace(m) + " | " + string(m.Seccomp) + " | " + ports + " |")
		for _, p := range promise.NetPromises() {
			b.WriteString(" " + joinLayers(m.Layers[p]) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// namespace is the namespace column: the run's own, with lo up or down,
// or the host's.
func namespace(m Mode) string {
	switch {
	case !m.OwnNamespace:
		return "no: the host's"
	case m.Loopback:
		return "yes, `lo` up"
	}
	return "yes, `lo` down"
}

func joinLayers(ls []promise.Layer) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, ", ")
}
