package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// The profiles file, JSON:
//
//	{"profiles": {
//	    "default":  {"memory": "4G"},
//	    "long-run": {"base": "default", "timeout": "2h", "cpus": 4}
//	}}
//
// A profile named like a built-in overrides it field by field; a new one
// starts from "base" (default: the default profile). Unknown fields and bad
// values are errors naming the field's path, e.g. profiles.long-run.timeout.

// validProfileName: lower-case letters, digits, '_', '.', '-', starting
// with a letter or digit, at most 64 bytes.
func validProfileName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '.' || s[0] == '_' || s[0] == '-' {
		return false
	}
	return runfiles.NameChars(s, false)
}

// setter decodes one field of a profile from its raw JSON.
type setter = func(p *Profile, raw json.RawMessage) error

// optionSetters decode the profile's fields that are options, by row of
// jail/option's table (a limit's field is jail/limits' table's:
// setterOf). A row with a profile field and no setter here fails
// TestEveryFieldHasASetter.
var optionSetters = map[*option.Option]setter{
	option.Net:           func(p *Profile, r json.RawMessage) error { return fresh(r, &p.Net) },
	option.AllowTCP:      func(p *Profile, r json.RawMessage) error { return fresh(r, &p.AllowTCP) },
	option.AllowHosts:    func(p *Profile, r json.RawMessage) error { return fresh(r, &p.AllowHosts) },
	option.AllowRanges:   func(p *Profile, r json.RawMessage) error { return fresh(r, &p.AllowRanges) },
	option.DBPorts:       func(p *Profile, r json.RawMessage) error { return fresh(r, &p.DBPorts) },
	option.DataDirs:      func(p *Profile, r json.RawMessage) error { return fresh(r, &p.DataDirs) },
	option.ReadOnly:      func(p *Profile, r json.RawMessage) error { return fresh(r, &p.ReadOnly) },
	option.ReadWrite:     func(p *Profile, r json.RawMessage) error { return fresh(r, &p.ReadWrite) },
	option.Env:           func(p *Profile, r json.RawMessage) error { return fresh(r, &p.Env) },
	option.AllowDegraded: func(p *Profile, r json.RawMessage) error { return fresh(r, &p.AllowDegraded) },
	option.RequireInput:  func(p *Profile, r json.RawMessage) error { return fresh(r, &p.RequireInput) },
	option.RequireLayers: func(p *Profile, r json.RawMessage) error { return fresh(r, &p.RequireLayers) },
	option.OutputIgnore:  outputIgnore,
}

// descriptionField is the one field that is no option: what the profile
// is for.
const descriptionField = "description"

// setterOf decodes the field called field, named as o names it: a
// limit's (limitSetter, read from the table at each call), an option's,
// or the description.
func setterOf(o option.Origin, field string) (string, setter, bool) {
	for _, l := range limits.All {
		if l.Field == field {
			return o.Name(l), limitSetter(l), true
		}
	}
	if r := option.ByField(field); r != nil && optionSetters[r] != nil {
		return o.Name(r), optionSetters[r], true
	}
	if field == descriptionField {
		return "profiles." + o.Profile() + "." + field, func(p *Profile, r json.RawMessage) error { return fresh(r, &p.Description) }, true
	}
	return "", nil, false
}

// ParseProfiles applies a profiles file to base (the built-ins) and returns
// the result; base is not modified.
func ParseProfiles(data []byte, base map[string]Profile) (map[string]Profile, error) {
	var top map[string]json.RawMessage
	if err := strict(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	out := make(map[string]Profile, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k := range top {
		if k != "profiles" {
			return nil, fmt.Errorf("%s: unknown field (the file holds one object, \"profiles\")", k)
		}
	}
	var raw map[string]map[string]json.RawMessage
	if err := strict(top["profiles"], &raw); err != nil {
		return nil, fmt.Errorf("profiles: want an object of profile objects: %w", err)
	}
	// Overrides of existing profiles first, so that a new profile based on
	// one sees the file's values; then new profiles in name order, each
	// once its base exists, so a base may be defined in the same file
	// under any name.
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		_, bi := base[names[i]]
		_, bj := base[names[j]]
		if bi != bj {
			return bi
		}
		return names[i] < names[j]
	})
	for len(names) > 0 {
		var waiting []string
		for _, name := range names {
			if bn, ok := baseName(raw[name]); ok && raw[bn] != nil && !has(out, bn) {
				waiting = append(waiting, name)
				continue
			}
			p, err := buildProfile(out, name, raw[name])
			if err != nil {
				return nil, err
			}
			out[name] = p
		}
		if len(waiting) == len(names) {
			bn, _ := baseName(raw[waiting[0]])
			return nil, fmt.Errorf("profiles.%s.base: no profile %q: the bases form a cycle", waiting[0], bn)
		}
		names = waiting
	}
	return out, nil
}

func has(ps map[string]Profile, name string) bool {
	_, ok := ps[name]
	return ok
}

// baseName is the profile's "base" when it is a string.
func baseName(fields map[string]json.RawMessage) (string, bool) {
	b, ok := fields["base"]
	if !ok {
		return "", false
	}
	var bn string
	return bn, strict(b, &bn) == nil
}

// buildProfile applies one profile's fields to what it starts from: the
// profile of that name, its base, or the default profile.
func buildProfile(out map[string]Profile, name string, fields map[string]json.RawMessage) (Profile, error) {
	path := "profiles." + name
	if !validProfileName(name) {
		return Profile{}, fmt.Errorf("%s: profile names are lower-case letters, digits, '_', '.', '-' (at most 64)", path)
	}
	p, exists := out[name]
	if b, ok := fields["base"]; ok {
		if exists {
			return Profile{}, fmt.Errorf("%s.base: only a new profile may name a base; %q already exists", path, name)
		}
		var bn string
		if err := strict(b, &bn); err != nil {
			return Profile{}, fmt.Errorf("%s.base: %w", path, err)
		}
		bp, ok := out[bn]
		if !ok {
			return Profile{}, fmt.Errorf("%s.base: no profile %q", path, bn)
		}
		p = bp
	} else if !exists {
		p = out["default"]
	}
	p.Name = name
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "base" {
			continue
		}
		field, set, ok := setterOf(p.Origin(), k)
		if !ok {
			return Profile{}, fmt.Errorf("%s.%s: unknown field", path, k)
		}
		if err := set(&p, fields[k]); err != nil {
			return Profile{}, fmt.Errorf("%s: %w", field, err)
		}
	}
	// Check names each field by its path.
	if err := p.Check(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// strict decodes JSON refusing unknown fields and trailing data.
func strict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("empty value")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// Not dec.More: it reports false for a stray '}' or ']'.
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return fmt.Errorf("trailing data after the value")
	}
	return nil
}

// fresh decodes into a new value and only then stores it: decoding into
// *dst directly would reuse the backing array of a slice, which the built-ins
// share between profiles (and the caller's base map holds), so overriding
// one profile's list would rewrite the others'.
func fresh[T any](r json.RawMessage, dst *T) error {
	if string(bytes.TrimSpace(r)) == "null" {
		// null would decode to the zero value: 0 cpus or pids is "no
		// limit", which must be asked for as 0, not arrive by accident.
		return fmt.Errorf("null is not a value; give the value or leave the field out")
	}
	var v T
	if err := strict(r, &v); err != nil {
		return err
	}
	*dst = v
	return nil
}

// limitSetter reads a limit's field by the table's rule, as its flag is
// read: counts and CPUs are JSON numbers or the string "none", sizes and
// durations strings.
func limitSetter(l *limits.Limit) func(p *Profile, raw json.RawMessage) error {
	return func(p *Profile, r json.RawMessage) error {
		text, err := limitText(l, r)
		if err != nil {
			return err
		}
		a, err := l.Parse(text)
		if err != nil {
			return err
		}
		p.Limits.Set(l, a)
		return nil
	}
}

// limitText is a limit field's value as the text its flag would take.
func limitText(l *limits.Limit, r json.RawMessage) (string, error) {
	t := bytes.TrimSpace(r)
	if string(t) == "null" {
		// null would decode to the zero value: 0 cpus or pids is "no
		// limit", which must be asked for as none, not arrive by accident.
		if !l.None {
			return "", fmt.Errorf("null is not a value; give the value or leave the field out")
		}
		return "", fmt.Errorf("null is not a value; give the value, \"none\" for no limit, or leave the field out")
	}
	var text string
	if l.Kind == limits.Count || l.Kind == limits.CPUs {
		if len(t) > 0 && t[0] == '"' {
			if err := strict(t, &text); err != nil {
				return "", err
			}
			if text != limits.NoLimit {
				return "", fmt.Errorf("%q: give a number, or the string \"none\" for no limit", text)
			}
			return text, nil
		}
		var n json.Number
		if err := strict(t, &n); err != nil {
			return "", fmt.Errorf("want a number or \"none\": %w", err)
		}
		return n.String(), nil
	}
	if err := strict(t, &text); err != nil {
		ex := map[limits.Kind]string{limits.Size: `"512M" or "2G"`, limits.Duration: `"90s" or "30m"`}[l.Kind]
		if l.None {
			ex += ` or "none"`
		}
		return "", fmt.Errorf("want a %s string such as %s: %w", l.Kind, ex, err)
	}
	return text, nil
}

// ProfileView is a profile as `scidex-jail profiles` prints it: the same
// field names and units a profiles file uses. Its JSON is the name, the
// description, the limits (one field per row of jail/limits' table, in
// the table's order) and then the Permissions' fields.
type ProfileView struct {
	Name        string
	Description string
	Limits      []LimitView
	Permissions
}

// LimitView is one limit's field: counts and CPUs a number or "none",
// sizes and durations a string ("2G", "30m0s", "none").
type LimitView struct {
	Field string
	Value json.RawMessage
}

// MarshalJSON writes the fields in the order ProfileView gives.
func (v ProfileView) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	head, err := json.Marshal(struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}{v.Name, v.Description})
	if err != nil {
		return nil, err
	}
	b.Write(head[:len(head)-1])
	for _, l := range v.Limits {
		name, _ := json.Marshal(l.Field)
		fmt.Fprintf(&b, ",%s:%s", name, l.Value)
	}
	rest, err := json.Marshal(v.Permissions)
	if err != nil {
		return nil, err
	}
	b.WriteByte(',')
	b.Write(rest[1:])
	return b.Bytes(), nil
}

// View returns the printable form.
func (p Profile) View() ProfileView {
	v := ProfileView{
		Name: p.Name, Description: p.Description,
		Permissions: Permissions{
			Net: p.Net, AllowTCP: nz(p.AllowTCP), AllowHosts: nz(p.AllowHosts), AllowRanges: nz(p.AllowRanges),
			DBPorts: nz(p.DBPorts), DataDirs: nz(p.DataDirs), ReadOnly: nz(p.ReadOnly), ReadWrite: nz(p.ReadWrite),
			Env: nz(p.Env), AllowDegraded: nz(p.AllowDegraded), RequireInput: p.RequireInput,
			RequireLayers: p.RequireLayers, OutputIgnore: nz(p.OutputIgnore),
		},
	}
	for _, l := range limits.All {
		v.Limits = append(v.Limits, LimitView{l.Field, limitValue(l, p.Limits.Get(l))})
	}
	if v.RequireLayers == nil {
		v.RequireLayers = map[promise.Promise]int{}
	}
	return v
}

// limitValue is a limit's value the way a profiles file gives it: a
// count or CPUs the number, or "none" when it is off; a size or a
// duration its text.
func limitValue(l *limits.Limit, a limits.Amount) json.RawMessage {
	var b []byte
	switch {
	case (l.Kind == limits.Count || l.Kind == limits.CPUs) && a.IsZero():
		b, _ = json.Marshal(limits.NoLimit)
	case l.Kind == limits.Count:
		b, _ = json.Marshal(float64(a.Int()))
	case l.Kind == limits.CPUs:
		b, _ = json.Marshal(a.Float())
	default:
		b, _ = json.Marshal(l.Format(a))
	}
	return b
}

// outputIgnore reads output_ignore: a list replaces the base profile's
// names, {"extend": [...]} adds to them (a profile that only wants .tox/
// ignored too keeps the default caches ignored).
func outputIgnore(p *Profile, r json.RawMessage) error {
	if t := bytes.TrimSpace(r); len(t) > 0 && t[0] == '{' {
		var ext struct {
			Extend *[]string `json:"extend"`
		}
		const want = `want a list of names (replacing the base profile's) or {"extend": [names]} (adding to them)`
		if err := strict(r, &ext); err != nil {
			return fmt.Errorf("%s: %w", want, err)
		}
		if ext.Extend == nil {
			return errors.New(want)
		}
		p.OutputIgnore = append(slices.Clone(p.OutputIgnore), *ext.Extend...)
		return nil
	}
	return fresh(r, &p.OutputIgnore)
}

// nz is s, or an empty list for nil: a profile prints [] for a list it
// leaves empty, never null.
func nz[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
