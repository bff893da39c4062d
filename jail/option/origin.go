package option

import "strings"

// Where is the language a value was written in: the place a user gave
// it, whose words a message about it uses.
type Where uint8

const (
	// Flag: the command line (--ro). The zero Where: a Spec a program
	// builds is named as the command line would give it.
	Flag Where = iota
	// ProfileField: a profile of the profiles file (profiles.z.read_only).
	ProfileField
	// RequestField: a request's field (serve, run --server).
	RequestField
	// Keyword: a keyword argument of the Python package's run().
	Keyword
)

// Wheres are the languages, in order.
var Wheres = []Where{Flag, ProfileField, RequestField, Keyword}

func (w Where) String() string {
	switch w {
	case Flag:
		return "flag"
	case ProfileField:
		return "profile field"
	case RequestField:
		return "request field"
	case Keyword:
		return "keyword"
	}
	return "where(" + string(rune('0'+w)) + ")"
}

// Names are a row's names in each language; "" where the row cannot be
// given there (db_ports has no flag, the analysis ID no profile field).
type Names struct {
	Flag    string // the command line's flag, without its dashes: ro
	Field   string // the profiles file's field: read_only
	Request string // a request's field: read_only (a limit's: limits.memory)
	Keyword string // the Python package's keyword argument: ro
}

// In is the row's bare name in w's language: ro, read_only, read_only, ro.
func (n Names) In(w Where) string {
	switch w {
	case Flag:
		return n.Flag
	case ProfileField:
		return n.Field
	case RequestField:
		return n.Request
	case Keyword:
		return n.Keyword
	}
	return ""
}

// Row is a run option or a limit: anything a user writes a value for.
type Row interface{ RowNames() Names }

// Origin says where a run's values came from, so that a message names
// what the user wrote, in the words of where they wrote it. Values come
// from a profile (profiles.z.read_only) except the rows given over it,
// which were written in one language, the Origin's over: flags on the
// command line (--ro), a request's fields, Python's keywords. A row with
// no profile field (the ID, the tmp-root, the report) is always given.
// The zero Origin names flags throughout: a Spec built by a program has
// no profiles file to point at.
//
// A list row may hold the profile's entries followed by entries given
// over it, some written as another row (--input's paths are read-only
// paths): [Origin.Added] records where each run of entries starts, and
// [Origin.NameAt] names one entry as it was written.
type Origin struct {
	profile string
	over    Where
	given   []given // in the order given; read from the end
}

// given: the entries of the row named list from index from on were
// written as the row named as, over the profile (a whole value: from 0,
// as the row itself).
type given struct {
	list Names
	from int
	as   Names
}

// FromProfile is the origin of the values of the profile called profile,
// with the rows given over it (With, Added) written in over's language.
func FromProfile(profile string, over Where) Origin {
	return Origin{profile: profile, over: over}
}

// Profile is the profile the values came from ("" for none).
func (o Origin) Profile() string { return o.profile }

// Over is the language of the values given over the profile.
func (o Origin) Over() Where { return o.over }

// With is o with r's value given over the profile's, in o's language.
func (o Origin) With(r Row) Origin { return o.Added(r, 0, r) }

// Added is o with list's entries from index from on given over the
// profile's (its first from entries), written as the row as: the same
// row, or one whose values land in list (--input's in read_only). Entries
// added later by another call start where it says.
func (o Origin) Added(list Row, from int, as Row) Origin {
	g := make([]given, len(o.given), len(o.given)+1)
	copy(g, o.given)
	o.given = append(g, given{list.RowNames(), from, as.RowNames()})
	return o
}

// Given reports whether r's value, or any entry of it, was given over
// the profile, or r is a row no profile holds.
func (o Origin) Given(r Row) bool {
	n := r.RowNames()
	if o.profile == "" || n.Field == "" {
		return true
	}
	for _, g := range o.given {
		if g.list == n {
			return true
		}
	}
	return false
}

// Name is what the user wrote to give r's value: --disk,
// profiles.gpu.disk, request field limits.disk, keyword disk.
func (o Origin) Name(r Row) string {
	n := r.RowNames()
	if o.Given(r) {
		return o.name(o.over, n)
	}
	return o.name(ProfileField, n)
}

// NameAt is what the user wrote to give entry i of list row r: --ro for a
// path given as a flag, profiles.z.read_only for one of the profile's,
// --input for one given as an input.
func (o Origin) NameAt(r Row, i int) string {
	n := r.RowNames()
	for j := len(o.given) - 1; j >= 0; j-- {
		if g := o.given[j]; g.list == n && i >= g.from {
			return o.name(o.over, g.as)
		}
	}
	if o.profile == "" || n.Field == "" {
		return o.name(o.over, n)
	}
	return o.name(ProfileField, n)
}

// name is the one place a row's name is written in a language. Where
// the row has no name in w (db_ports on the command line, output_ignore
// in a request), its profile field names it, else its request field.
func (o Origin) name(w Where, n Names) string {
	switch {
	case w == Flag && n.Flag != "":
		return "--" + n.Flag
	case w == Flag && n.Field == "" && n.Request != "":
		// A row the command line takes as its positional argument.
		return "the " + n.Request + " after '--'"
	case w == RequestField && n.Request != "":
		return "request field " + n.Request
	case w == Keyword && n.Keyword != "":
		return "keyword " + n.Keyword
	case n.Field != "" && o.profile != "":
		return "profiles." + o.profile + "." + n.Field
	case n.Field != "":
		return n.Field
	}
	return n.Request
}

// Join names rows in o's language, as given over the profile, joined
// by "and": advice to give them together ("--uid and --gid").
func (o Origin) Join(rows ...Row) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = o.name(o.over, r.RowNames())
	}
	return strings.Join(s, " and ")
}
