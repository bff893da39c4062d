package request

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// DefaultProfile is the profile of a request that names none.
const DefaultProfile = "default"

// Resolve is the run r asks for, as a spec: the profile's values (loaded
// from r.Config, or the installed profiles file), r's values over them,
// relative paths taken from r.Cwd. Its messages name what r gives in
// over's language (option.Flag for `run`'s command line,
// option.RequestField for a server's request), and so do the run's own
// checks (the spec's From); a value r gives that cannot be used is a
// *FieldError naming the request's field. The spec is validated by the
// run (jail.Spec.Validate, in supervise.Run), once. Spec.Started is the
// caller's to set.
func (r *Request) Resolve(over option.Where) (*jail.Spec, error) {
	// What r gives is named in over's words: an origin of no profile
	// names every row so.
	given := option.FromProfile("", over)
	if !filepath.IsAbs(r.Cwd) {
		return nil, &FieldError{Field: "cwd", Err: fmt.Errorf("%w: cwd %q: give the absolute directory relative paths are taken from", jail.ErrBadSpec, r.Cwd)}
	}
	// Not filepath.Join: it would clean "a/../b" lexically, where the
	// jail resolves paths as the kernel walks them (links first).
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return strings.TrimRight(r.Cwd, "/") + "/" + p
	}
	p, err := r.profile(abs(r.Config), given)
	if err != nil {
		return nil, err
	}
	// Everything the profile decides, then the run's own.
	spec := p.Spec()
	s := &spec
	s.ID, s.Command = r.ID, r.Command
	s.Env = append(s.Env, r.Env...)
	s.TmpRoot, s.Root, s.CgroupParent = r.TmpRoot, abs(r.Root), r.CgroupParent
	if s.TmpRoot == "" {
		s.TmpRoot = jail.DefaultTmpRoot
	}
	if s.Root == "" {
		s.Root = r.Cwd
	}
	s.Keep, s.KeepScratch, s.Collect, s.CollectMerge, s.Report = r.Keep, r.KeepScratch, abs(r.Collect), r.CollectMerge, abs(r.Report)
	if s.HostUID, s.HostGID, s.UIDRange, err = IDs(r.UID, r.GID, r.UIDRange, over); err != nil {
		return nil, err
	}
	ins, err := r.optIns(given)
	if err != nil {
		return nil, err
	}
	s.OptIns = append(s.OptIns, ins...)
	if s.ReadOnly, s.ReadWrite, err = r.paths(p, abs, given); err != nil {
		return nil, err
	}
	if p.RequireInput && len(r.Inputs) == 0 {
		return nil, refuse(option.Inputs, "profile %s reads earlier outputs: give them with %s DIR (e.g. the collect directory of an earlier run)", p.Name, given.Name(option.Inputs))
	}
	limited, err := r.limits(s, given)
	if err != nil {
		return nil, err
	}
	if r.Net != "" {
		if _, err := netmode.Lookup(r.Net); err != nil {
			return nil, refuse(option.Net, "%s %w", given.Name(option.Net), err)
		}
		s.Net = r.Net
	}
	if len(r.AllowTCP) > 0 {
		if slices.Contains(r.AllowTCP, 0) {
			return nil, refuse(option.AllowTCP, "%s 0: give TCP port numbers 1-65535", given.Name(option.AllowTCP))
		}
		s.AllowTCP = slices.Clone(r.AllowTCP)
	}
	// Over the profile's, as its paths and env: checked with them by the
	// run (jail's validateHosts), named as the user wrote each.
	s.AllowHosts = append(s.AllowHosts, r.AllowHosts...)
	s.AllowRanges = append(s.AllowRanges, r.AllowRanges...)
	s.From = r.origin(p, over, limited)
	return s, nil
}

// profile loads the profiles (from config when given) and picks r's.
func (r *Request) profile(config string, given option.Origin) (profile.Profile, error) {
	n := r.Profile
	if n == "" {
		n = DefaultProfile
	}
	p, ok, known, err := profile.LoadProfile(config, n)
	if err != nil {
		return profile.Profile{}, wrapField(option.Config, err)
	}
	if !ok {
		return profile.Profile{}, refuse(option.Profile, "%s %q: no such profile; known: %s", given.Name(option.Profile), n, strings.Join(known, ", "))
	}
	return p, nil
}

// paths are the run's read-only and read-write host paths, absolute: the
// profile's, then r's (inputs are read-only). Each of r's must exist
// (runfiles.NormalInput, the rule the run holds every path to), so that
// a missing one is refused naming r's field; the profile's are the
// run's to check, naming the profile's.
func (r *Request) paths(p profile.Profile, abs func(string) string, given option.Origin) (ro, rw []string, err error) {
	for _, l := range []struct {
		row  *option.Option
		dst  *[]string
		from []string
		mine bool
	}{
		{option.ReadOnly, &ro, p.ReadOnly, false}, {option.Inputs, &ro, r.Inputs, true}, {option.ReadOnly, &ro, r.ReadOnly, true},
		{option.ReadWrite, &rw, p.ReadWrite, false}, {option.ReadWrite, &rw, r.ReadWrite, true},
	} {
		for _, path := range l.from {
			path = abs(path)
			if l.mine {
				if _, err := runfiles.NormalInput(given.Name(l.row), path); err != nil {
					return nil, nil, wrapField(l.row, err)
				}
			}
			*l.dst = append(*l.dst, path)
		}
	}
	return ro, rw, nil
}

// optIns are the protections r gives up, read once here: those switched
// off, then those degraded, the order the report has always listed them.
func (r *Request) optIns(given option.Origin) (promise.OptIns, error) {
	off, err := promise.ParseOptIns(promise.OptInDisable, r.UnsafeDisable)
	if err != nil {
		return nil, refuse(option.UnsafeDisable, "%s %w", given.Name(option.UnsafeDisable), err)
	}
	less, err := promise.ParseOptIns(promise.OptInDegrade, r.AllowDegraded)
	if err != nil {
		return nil, refuse(option.AllowDegraded, "%s %w", given.Name(option.AllowDegraded), err)
	}
	return append(off, less...), nil
}

// limits reads r's limits, in the table's order, puts them over the
// profile's in s and returns the rows given. A profile's values follow a
// smaller limit given here that bounds them: no honest run stores more
// files than its disk budget holds, and a tmpfs counts toward the memory
// limit. Sizes given here are checked by the run, never changed.
func (r *Request) limits(s *jail.Spec, given option.Origin) ([]*limits.Limit, error) {
	for _, k := range slices.Sorted(maps.Keys(r.Limits)) {
		if !slices.ContainsFunc(limits.All, func(l *limits.Limit) bool { return l.Name == k }) {
			known := make([]string, len(limits.All))
			for i, l := range limits.All {
				known[i] = l.Name
			}
			return nil, refuse(unknownLimit(k), "%s: no such limit; known: %s", given.Name(unknownLimit(k)), strings.Join(known, ", "))
		}
	}
	var set []*limits.Limit
	for _, l := range limits.All {
		text, ok := r.Limits[l.Name]
		if !ok {
			continue
		}
		a, err := l.Parse(text)
		if err != nil {
			return nil, refuse(l, "%s: %w", given.Name(l), err)
		}
		s.Limits.Set(l, a)
		set = append(set, l)
	}
	for _, f := range []struct{ bound, follower *limits.Limit }{
		{limits.Disk, limits.OutputBytes}, {limits.Disk, limits.OutputFileBytes},
		{limits.Memory, limits.Disk}, {limits.Memory, limits.Shm},
	} {
		bound, v := s.Limits.Int(f.bound), s.Limits.Int(f.follower)
		if slices.Contains(set, f.bound) && !slices.Contains(set, f.follower) && bound > 0 && v > bound {
			s.Limits.Set(f.follower, limits.Int(bound))
		}
	}
	return set, nil
}

// unknownLimit is a key of a request's limits that names no limit: a row
// of its own, only to be named (only a request can give one).
type unknownLimit string

func (k unknownLimit) RowNames() option.Names { return option.Names{Request: "limits." + string(k)} }

// origin says where the run's values came from: the profile p's, and the
// rows r gives over them, written in over's language, so that the run's
// messages name each as the user wrote it. A list holds the profile's
// entries first, then r's (paths: its inputs, then its read-only paths).
func (r *Request) origin(p profile.Profile, over option.Where, limited []*limits.Limit) option.Origin {
	from := option.FromProfile(p.Name, over)
	for _, l := range limited {
		from = from.With(l)
	}
	for _, l := range []struct {
		list, as option.Row
		from     int
		given    bool
	}{
		{option.ReadOnly, option.Inputs, len(p.ReadOnly), len(r.Inputs) > 0},
		{option.ReadOnly, option.ReadOnly, len(p.ReadOnly) + len(r.Inputs), len(r.ReadOnly) > 0},
		{option.ReadWrite, option.ReadWrite, len(p.ReadWrite), len(r.ReadWrite) > 0},
		{option.Env, option.Env, len(p.Env), len(r.Env) > 0},
		{option.Net, option.Net, 0, r.Net != ""},
		{option.AllowTCP, option.AllowTCP, 0, len(r.AllowTCP) > 0},
		{option.AllowHosts, option.AllowHosts, len(p.AllowHosts), len(r.AllowHosts) > 0},
		{option.AllowRanges, option.AllowRanges, len(p.AllowRanges), len(r.AllowRanges) > 0},
		{option.AllowDegraded, option.AllowDegraded, 0, len(r.AllowDegraded) > 0},
	} {
		if l.given {
			from = from.Added(l.list, l.from, l.as)
		}
	}
	return from
}

// IDs are the host uid and gid a request fixes (0, 0: lease one from the
// range) and the range they are leased from: uid and gid both or neither,
// never 0; the range's text as FIRST-LAST ("": uidlease.Default). Its
// messages name them in over's language. Shared with check, whose flags
// say the same.
func IDs(uid, gid *int, uidRange string, over option.Where) (int, int, uidlease.Range, error) {
	given := option.FromProfile("", over)
	r := uidlease.Default
	if uidRange != "" {
		var err error
		if r, err = uidlease.ParseRange(uidRange); err != nil {
			return 0, 0, r, refuse(option.UIDRange, "%s: %w", given.Name(option.UIDRange), err)
		}
	}
	both := given.Join(option.UID, option.GID)
	switch {
	case uid == nil && gid == nil:
		return 0, 0, r, nil
	case uid == nil || gid == nil:
		missing := option.UID
		if gid == nil {
			missing = option.GID
		}
		return 0, 0, r, refuse(missing, "%s go together: give both for fixed ids, or neither for ids leased from %s", both, given.Name(option.UIDRange))
	case *uid <= 0 || *gid <= 0:
		zero := option.UID
		if *uid > 0 {
			zero = option.GID
		}
		return 0, 0, r, refuse(zero, "%s %d:%d must be non-zero, so the analysis never runs as host root", strings.ReplaceAll(both, " and ", "/"), *uid, *gid)
	}
	return *uid, *gid, r, nil
}
