package limits

import "github.com/scidex/scidex-jail/jail/option"

// RowNames makes a limit a row of jail/option, named as the user writes
// it: the flag and the profile field are the row's; a request gives it
// in its limits object by the limit's name (limits.memory), and the
// Python package takes it as a keyword of that name.
func (l *Limit) RowNames() option.Names {
	return option.Names{Flag: l.Flag, Field: l.Field, Request: "limits." + l.Name, Keyword: l.Name}
}
