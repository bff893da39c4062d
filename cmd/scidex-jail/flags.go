package main

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
)

// limitFlag is the value of every limit flag: kong finds the flag's row
// in jail/limits' table by the flag's name and reads the value with the
// row's parser, so the command line and the profiles file follow one rule
// (README, "Limits"); a refused value ends the parse with the flag's name
// and the row's message. The flags are pointers: nil is "not given", so
// the profile's value stands, where 0 or none given on the command line
// overrides it. The text given is what goes in the run's request.
type limitFlag struct {
	limit  *limits.Limit
	amount limits.Amount
	text   string
}

func (f *limitFlag) Decode(ctx *kong.DecodeContext) error {
	l := limits.ByFlag(ctx.Value.Name)
	if l == nil {
		return fmt.Errorf("bug: --%s has no row in jail/limits' table", ctx.Value.Name)
	}
	var s string
	if err := ctx.Scan.PopValueInto(l.Noun, &s); err != nil {
		return err
	}
	a, err := l.Parse(s)
	if err != nil {
		return err
	}
	*f = limitFlag{limit: l, amount: a, text: s}
	return nil
}

// tcpPort is one port of --allow-tcp: 1-65535.
type tcpPort uint16

func (v *tcpPort) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("port", &s); err != nil {
		return err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("%q: give TCP port numbers 1-65535, comma-separated", s)
	}
	*v = tcpPort(n)
	return nil
}

// limitFlags are run's limits; each left out keeps the profile's value.
// The limit flags are not written here: Table holds a struct made from
// jail/limits' table (tableFlags), one *limitFlag per row in the table's
// order, which kong embeds where Table stands, so that a new row is a
// new flag with no line here.
type limitFlags struct {
	Table kong.Plugins `embed:""`

	// Net's and AllowTCP's help come from jail/netmode's table (netHelp).
	Net      netmode.Name `name:"net" placeholder:"MODE" help:"Network mode."`
	AllowTCP []tcpPort    `name:"allow-tcp" placeholder:"PORT" sep:","`
	// The egress mode's hosts and ranges, added to the profile's (their
	// help is their rows').
	AllowHost  []string `name:"allow-host" sep:"none"`
	AllowRange []string `name:"allow-range" sep:"none"`
}

// netHelp gives --net and --allow-tcp their help from jail/netmode's
// table once kong has built the grammar: a struct tag cannot be made from
// the table, and a kong variable would cost every run its cloning
// (tableFlags), where this is a walk over a few dozen flags.
func netHelp() kong.Option {
	return kong.PostBuild(func(k *kong.Kong) error {
		return kong.Visit(k.Model, func(n kong.Visitable, next kong.Next) error {
			if f, ok := n.(*kong.Flag); ok {
				switch f.Name {
				case "net":
					f.Help = netmode.Help()
				case "allow-tcp":
					f.Help = "Outbound TCP ports allowed with --net " + netmode.Choices(netmode.Takers()) + ". PostgreSQL's 5432 can never be allowed."
				}
			}
			return next(nil)
		})
	})
}

// tableFlags is a new struct of one *limitFlag field per row of rows, with
// the row's flag name, placeholder and help in its tag, for kong to embed.
// No kong variables: kong clones its variables for every value it
// interpolates, which cost a run 1.3 ms.
func tableFlags(rows []*limits.Limit) any {
	fields := make([]reflect.StructField, len(rows))
	for i, l := range rows {
		fields[i] = reflect.StructField{
			Name: fmt.Sprintf("Limit%d", i),
			Type: reflect.TypeFor[*limitFlag](),
			Tag:  reflect.StructTag(fmt.Sprintf(`name:%q placeholder:%q help:%q`, l.Flag, l.Placeholder, l.Help)),
		}
	}
	return reflect.New(reflect.StructOf(fields)).Interface()
}

// withTable gives l the table's flags, before kong reads the grammar.
func (l *limitFlags) withTable() {
	if l.Table == nil {
		l.Table = kong.Plugins{tableFlags(limits.All)}
	}
}

// given are the limit flags that were given, in the table's order.
func (l *limitFlags) given() []*limitFlag {
	var out []*limitFlag
	for _, t := range l.Table {
		v := reflect.ValueOf(t).Elem()
		for i := range v.NumField() {
			if f := v.Field(i).Interface().(*limitFlag); f != nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// texts are the limits given, by the limit's name, as their text: the
// request's limits.
func (l *limitFlags) texts() map[string]string {
	out := map[string]string{}
	for _, f := range l.given() {
		out[f.limit.Field] = f.text
	}
	return out
}

// rowHelp gives each flag of the model that is a row of jail/option's
// table the row's help and placeholder, where its tag gives none (serve's
// --cgroup-parent and --unsafe-disable say what they do for slots), and
// run's command the Command row's: --help, the manual page and the
// completion say what the rows say.
func rowHelp(n *kong.Node) {
	for _, f := range n.Flags {
		if r := option.ByFlag(f.Name); r != nil && f.Help == "" {
			f.Help, f.PlaceHolder = r.Help, r.Placeholder
		}
	}
	for _, a := range n.Positional {
		if a.Name == "command" && a.Help == "" {
			a.Help = option.Command.Help
		}
	}
	for _, c := range n.Children {
		rowHelp(c)
	}
}
