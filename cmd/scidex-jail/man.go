package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/internal/buildversion"
)

// manCmd is the hidden `scidex-jail man`: the manual page, in roff, made
// from the command line's own grammar and help texts, so the page never
// lists a flag the binary does not have. `make deb` installs its output as
// scidex-jail(1).
type manCmd struct{}

func (manCmd) Run(ctx *kong.Context) error {
	return writeMan(os.Stdout, ctx.Model)
}

// manSections are the parts of the page the grammar does not hold.
const manExit = `.SH EXIT STATUS
.TP
.B the analysis' own exit code
when it exited;
.TP
.B 128+n
when it died of signal n (also after the jail's SIGKILL at a timeout);
.TP
.B 125
when the jail failed before the analysis ran: bad input, a protection that cannot be enforced, a setup failure;
.TP
.B 126 \fRand\fB 127
when the command cannot be executed or is not found inside the jail;
.TP
.B 122
when the analysis ran but its outputs or its report could not be delivered (status delivery_failed; the whole report then goes to stderr).
.TP
.B 123
when the analysis ran but what it left went over an output budget (status output_limit; its own status and exit code are in the report's analysis_status and analysis_exit_code).
.TP
.B 121
with \fB\-\-server\fR only: when the server accepted the run and the connection ended before its reply (the server was killed): the run may have started, its outcome is unknown, no report came; \fBscidex-jail gc\fR removes what the server left.
.PP
Why a run ended is in the report's \fBstatus\fR field (ok, exit_nonzero, signaled, timeout, cancelled, oom_killed, pids_limit, disk_limit, output_limit, setup_error, delivery_failed), not only in the code. A setup_error names the stage that failed; the README's section "Troubleshooting" says, for each stage, what to check and how to fix it, and \fBscidex-jail check\fR tests the host's part.
.SH FILES
.TP
.I /etc/scidex-jail/profiles.json
The profiles file: limits and permissions by profile name, read by \fBrun\fR, \fBprofiles\fR and \fBcheck\fR unless \fB\-\-config\fR names another. \fBscidex-jail profiles \-\-builtin\fR prints the built-in profiles in its format.
.TP
.I /usr/share/scidex-jail/report.schema.json
The report's JSON Schema, as \fBscidex-jail schema\fR prints it.
.TP
.I /usr/share/doc/scidex-jail/
The README, the manual: install, first run, flags, profiles and limits, exit codes, the report, troubleshooting by setup stage. Its \fIdocs/\fR: the security model (security.md), deploying with systemd, Slurm and Kubernetes (deploying.md), the report field by field (report.md), performance (performance.md). Examples.
`

func writeMan(w io.Writer, app *kong.Application) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH SCIDEX-JAIL 1 \"\" \"scidex-jail %s\" \"User Commands\"\n", roff(buildversion.Version))
	fmt.Fprintf(&b, ".SH NAME\nscidex-jail \\- %s\n", roff(lowerFirst(strings.TrimSuffix(app.Help, "."))))
	b.WriteString(".SH SYNOPSIS\n")
	cmds := visibleCommands(app.Node)
	for _, c := range cmds {
		fmt.Fprintf(&b, ".B scidex-jail %s\n%s\n.br\n", c.Name, roff(synopsisArgs(c)))
	}
	fmt.Fprintf(&b, ".SH DESCRIPTION\n%s\n", roff(app.Help))
	b.WriteString(".PP\nEach command's flags follow. Flags of the form \\fB\\-\\-flag\\fR=\\fIVALUE\\fR may also be written \\fB\\-\\-flag\\fR \\fIVALUE\\fR.\n")
	b.WriteString(".SH COMMANDS\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, ".SS \"scidex-jail %s\"\n%s\n", c.Name, roff(c.Help))
		for _, p := range c.Positional {
			fmt.Fprintf(&b, ".TP\n.I %s\n%s\n", roff(strings.ToUpper(p.Name)), roff(p.Help))
		}
		for _, f := range visibleFlags(c) {
			fmt.Fprintf(&b, ".TP\n%s\n%s\n", flagHeading(f), roff(flagHelp(f)))
		}
	}
	b.WriteString(".SH GLOBAL FLAGS\n")
	for _, f := range visibleFlags(app.Node) {
		fmt.Fprintf(&b, ".TP\n%s\n%s\n", flagHeading(f), roff(flagHelp(f)))
	}
	b.WriteString(manExit)
	_, err := io.WriteString(w, b.String())
	return err
}

// visibleCommands are the commands a user sees in --help, in its order.
func visibleCommands(n *kong.Node) []*kong.Node {
	var out []*kong.Node
	for _, c := range n.Children {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

func visibleFlags(n *kong.Node) []*kong.Flag {
	var out []*kong.Flag
	for _, f := range n.Flags {
		if !f.Hidden {
			out = append(out, f)
		}
	}
	return out
}

// takesValue: bool flags stand alone, the others take one value.
func takesValue(f *kong.Flag) bool { return !f.IsBool() && !f.IsCounter() }

func synopsisArgs(c *kong.Node) string {
	var parts []string
	if len(visibleFlags(c)) > 0 {
		parts = append(parts, "[flags]")
	}
	for _, p := range c.Positional {
		if c.Name == "run" && p.Name == "command" {
			parts = append(parts, "-- COMMAND [ARG...]")
			continue
		}
		parts = append(parts, "["+strings.ToUpper(p.Name)+"...]")
	}
	return strings.Join(parts, " ")
}

func flagHeading(f *kong.Flag) string {
	h := `\fB\-\-` + roffWord(f.Name) + `\fR`
	if f.Short != 0 {
		h = `\fB\-` + string(f.Short) + `\fR, ` + h
	}
	if takesValue(f) {
		h += `=\fI` + roffWord(f.FormatPlaceHolder()) + `\fR`
	}
	return h
}

func flagHelp(f *kong.Flag) string {
	s := f.Help
	// Without a placeholder the heading shows the default already.
	if f.HasDefault && f.Default != "" && f.PlaceHolder != "" && !strings.Contains(s, "Default:") {
		s += " Default: " + f.Default + "."
	}
	if f.IsSlice() {
		s += " May be given more than once."
	}
	return s
}

// roff escapes text for a roff paragraph: backslashes, and a dot or quote
// that would start a request at the beginning of a line.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffWord escapes a word inside a font change: also hyphens, so that they
// print as minus signs a reader can copy.
func roffWord(s string) string {
	return strings.ReplaceAll(roff(s), "-", `\-`)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
