package limits

import "strings"

// MarkdownTable is the README's limits table (README, "Limits"), made
// from the rows; a golden test holds the README to it.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| limit | value | off | enforced by | when exceeded |\n|---|---|---|---|---|\n")
	for _, l := range All {
		cells := []string{"`" + l.Name + "`", l.Doc.Value, l.offCell(), l.Doc.EnforcedBy, l.Doc.Exceeded}
		b.WriteString("|")
		for _, c := range cells {
			if c == "" {
				b.WriteString(" |")
				continue
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// offCell says how the limit is switched off, if it can be.
func (l *Limit) offCell() string {
	switch {
	case !l.None:
		return "cannot be"
	case l.Zero == ZeroRefused && l.Doc.OffNote != "":
		return "`none` (`0` is refused: " + l.Doc.OffNote + ")"
	case l.Zero == ZeroRefused:
		return "`none` (`0` is refused)"
	case l.Doc.OffNote != "":
		return "`none` or `0` (" + l.Doc.OffNote + ")"
	}
	return "`none` or `0`"
}
