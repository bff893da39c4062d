package request

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// DefaultProfile is the profile of a request that names none.
const DefaultProfile = "default"

// Resolve is the run r asks for, as a spec: the profile's values (loaded
// from r.Config, or the installed profiles file), r's values over them,
// relative paths taken from r.Cwd. A value r gives that cannot be used is
// a *FieldError naming the field, in the words name gives (nil: the
// request's own); the spec is validated by the run (jail.Spec.Validate, in supervise.Run),
// once. Spec.Started is the caller's to set.
func (r *Request) Resolve(name Namer) (*jail.Spec, error) {
	if name == nil {
		name = func(f string) string { return f }
	}
	if !filepath.IsAbs(r.Cwd) {
		return nil, refuse("cwd", "%s %q: give the absolute directory relative paths are taken from", name("cwd"), r.Cwd)
	}
	// Not filepath.Join: it would clean "a/../b" lexically, where the
	// jail resolves paths as the kernel walks them (links first).
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return strings.TrimRight(r.Cwd, "/") + "/" + p
	}
	p, err := r.profile(abs(r.Config), name)
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
	if s.HostUID, s.HostGID, s.UIDRange, err = IDs(r.UID, r.GID, r.UIDRange, name); err != nil {
		return nil, err
	}
	if err := r.optIns(name); err != nil {
		return nil, err
	}
	s.AllowDegraded = append(s.AllowDegraded, r.AllowDegraded...)
	s.Disable = slices.Clone(r.UnsafeDisable)
	if s.ReadOnly, s.ReadWrite, err = r.paths(p, abs, name); err != nil {
		return nil, err
	}
	if p.RequireInput && len(r.Inputs) == 0 {
		return nil, refuse("inputs", "profile %s reads earlier outputs: give them with %s DIR (e.g. the collect directory of an earlier run)", p.Name, name("inputs"))
	}
	if err := r.limits(s, name); err != nil {
		return nil, err
	}
	if r.Net != "" {
		if _, err := netmode.Lookup(r.Net); err != nil {
			return nil, refuse("net", "%s %w", name("net"), err)
		}
		s.Net = r.Net
	}
	if len(r.AllowTCP) > 0 {
		if slices.Contains(r.AllowTCP, 0) {
			return nil, refuse("allow_tcp", "%s 0: give TCP port numbers 1-65535", name("allow_tcp"))
		}
		s.AllowTCP = slices.Clone(r.AllowTCP)
	}
	return s, nil
}

// profile loads the profiles (from config when given) and picks r's.
func (r *Request) profile(config string, name Namer) (profile.Profile, error) {
	profiles, _, err := profile.LoadProfiles(config)
	if err != nil {
		return profile.Profile{}, wrapField("config", err)
	}
	n := r.Profile
	if n == "" {
		n = DefaultProfile
	}
	p, ok := profiles[n]
	if !ok {
		return profile.Profile{}, refuse("profile", "%s %q: no such profile; known: %s", name("profile"), n, strings.Join(profile.Names(profiles), ", "))
	}
	return p, nil
}

// paths are the run's read-only and read-write host paths, absolute: the
// profile's, then r's (inputs are read-only). Each of r's must exist
// (runfiles.NormalInput, the rule the run holds every path to), so that
// a missing one is refused naming r's field; the profile's are the
// run's to check, naming the profile's.
func (r *Request) paths(p profile.Profile, abs func(string) string, name Namer) (ro, rw []string, err error) {
	for _, l := range []struct {
		field string
		dst   *[]string
		from  []string
		mine  bool
	}{
		{"read_only", &ro, p.ReadOnly, false}, {"inputs", &ro, r.Inputs, true}, {"read_only", &ro, r.ReadOnly, true},
		{"read_write", &rw, p.ReadWrite, false}, {"read_write", &rw, r.ReadWrite, true},
	} {
		for _, path := range l.from {
			path = abs(path)
			if l.mine {
				if _, err := runfiles.NormalInput(name(l.field), path); err != nil {
					return nil, nil, wrapField(l.field, err)
				}
			}
			*l.dst = append(*l.dst, path)
		}
	}
	return ro, rw, nil
}

// optIns checks the protections r names to degrade or disable, one
// field at a time (the run checks them all again, with the profile's).
func (r *Request) optIns(name Namer) error {
	if _, err := promise.ParseOptIns(r.AllowDegraded, nil); err != nil {
		return wrapField("allow_degraded", err)
	}
	if _, err := promise.ParseOptIns(nil, r.UnsafeDisable); err != nil {
		return wrapField("unsafe_disable", err)
	}
	return nil
}

// limits reads r's limits, in the table's order, and puts them over the
// profile's in s. A profile's values follow a smaller limit given here
// that bounds them: no honest run stores more files than its disk budget
// holds, and a tmpfs counts toward the memory limit. Sizes given here are
// checked by the run, never changed.
func (r *Request) limits(s *jail.Spec, name Namer) error {
	for _, k := range slices.Sorted(maps.Keys(r.Limits)) {
		if !slices.ContainsFunc(limits.All, func(l *limits.Limit) bool { return l.Field == k }) {
			known := make([]string, len(limits.All))
			for i, l := range limits.All {
				known[i] = l.Field
			}
			return refuse("limits."+k, "%s: no such limit; known: %s", name("limits."+k), strings.Join(known, ", "))
		}
	}
	var given []*limits.Limit
	for _, l := range limits.All {
		text, ok := r.Limits[l.Field]
		if !ok {
			continue
		}
		field := "limits." + l.Field
		a, err := l.Parse(text)
		if err != nil {
			return refuse(field, "%s: %w", name(field), err)
		}
		s.Limits.Set(l, a)
		given = append(given, l)
	}
	for _, f := range []struct{ bound, follower *limits.Limit }{
		{limits.Disk, limits.OutputBytes}, {limits.Disk, limits.OutputFileBytes},
		{limits.Memory, limits.Disk}, {limits.Memory, limits.Shm},
	} {
		bound, v := s.Limits.Int(f.bound), s.Limits.Int(f.follower)
		if slices.Contains(given, f.bound) && !slices.Contains(given, f.follower) && bound > 0 && v > bound {
			s.Limits.Set(f.follower, limits.Int(bound))
		}
	}
	s.LimitsFrom = origin(s.Profile, given)
	return nil
}

// origin says where the run's limits came from: the profile's, and those
// the request gave over them, which the run's messages name as flags
// (limits.Origin's only other language today).
func origin(profile string, given []*limits.Limit) limits.Origin {
	o := limits.FromProfile(profile)
	for _, l := range given {
		o = o.WithFlag(l)
	}
	return o
}

// IDs are the host uid and gid a request fixes (0, 0: lease one from the
// range) and the range they are leased from: uid and gid both or neither,
// never 0; the range's text as FIRST-LAST ("": uidlease.Default). Shared
// with check and serve, whose flags say the same.
func IDs(uid, gid *int, uidRange string, name Namer) (int, int, uidlease.Range, error) {
	if name == nil {
		name = func(f string) string { return f }
	}
	r := uidlease.Default
	if uidRange != "" {
		var err error
		if r, err = uidlease.ParseRange(uidRange); err != nil {
			return 0, 0, r, refuse("uid_range", "%s: %w", name("uid_range"), err)
		}
	}
	switch {
	case uid == nil && gid == nil:
		return 0, 0, r, nil
	case uid == nil:
		return 0, 0, r, refuse("uid", "%s and %s go together: give both for fixed ids, or neither for ids leased from %s", name("uid"), name("gid"), name("uid_range"))
	case gid == nil:
		return 0, 0, r, refuse("gid", "%s and %s go together: give both for fixed ids, or neither for ids leased from %s", name("uid"), name("gid"), name("uid_range"))
	case *uid <= 0:
		return 0, 0, r, refuse("uid", "%s/%s %d:%d must be non-zero, so the analysis never runs as host root", name("uid"), name("gid"), *uid, *gid)
	case *gid <= 0:
		return 0, 0, r, refuse("gid", "%s/%s %d:%d must be non-zero, so the analysis never runs as host root", name("uid"), name("gid"), *uid, *gid)
	}
	return *uid, *gid, r, nil
}
