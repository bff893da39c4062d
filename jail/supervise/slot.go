package supervise

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// A Slot is what a run's request does not decide, done ahead of it, for
// scidex-jail serve: the init exec'd as PID 1 of its own new namespaces,
// born in its own cgroup leaf, its version checked, its view built and
// the thread that forks the analysis confined when the run directory is
// a budget tmpfs (viewAhead), the run directory's host side made
// (anchor), the leaf's usage read once idle (base), waiting for its
// run's config. What depends on
// the request is left: the leaf's limits are written when they differ,
// the run directory named and the config sent (with the analysis' stdio)
// when a run takes it. A slot serves exactly one run, or is destroyed unused; it
// is never reset. Nothing is shared between slots: each has its own
// namespaces, leaf and init process.
type Slot struct {
	key     SlotKey
	prog    *initconn.Program
	leaf    *cgroupfs.Leaf
	spawner *initconn.Spawner
	conn    *initconn.Conn
	lease   *uidlease.Lease // the slot's ids when leased; the run that takes the slot takes it
	made    time.Time
	// template is the spec the slot was made for: Current checks that a
	// slot made from it now would still have the slot's key.
	template *jail.Spec
	checked  time.Time // Current's last look, and what it found
	current  bool
	leased   int // the slot's leased id (lease's, which a run takes); 0: none
	// limits are the leaf's as the slot's start wrote them.
	limits cgroupfs.Limits
	// anchor is the run directory made ahead in the template's tmp-root
	// (nil: none could be made): the run that takes the slot claims it
	// when its own is in that tmp-root with that owner.
	anchor *runfiles.Anchor
	// base is the leaf's usage once the slot is ready and idle (nil: not
	// read, or no view built ahead): the run's counters start there.
	base *cgroupfs.Usage
}

// PrepareSlot makes a slot for runs like template (a spec of the profile
// the slot serves: its namespaces, identity and cgroup controllers; its ID
// names the leaf). Its limits are written at once, and again by the run
// that takes it.
func PrepareSlot(template *jail.Spec) (*Slot, error) {
	s, err := template.Validate()
	if err != nil {
		return nil, err
	}
	lease, err := leaseIDs(s)
	if err != nil {
		return nil, fmt.Errorf("prepare slot: %w", err)
	}
	plan, _, err := jail.BuildPlan(s, jail.LookHost(&s.Spec))
	if err != nil {
		lease.Release()
		return nil, fmt.Errorf("prepare slot: %w", err)
	}
	prog, err := initconn.Open()
	if err != nil {
		lease.Release()
		return nil, fmt.Errorf("prepare slot: %w", err)
	}
	sl := &Slot{prog: prog, lease: lease, made: time.Now(), template: template, checked: time.Now(), current: true}
	if plan.Cgroup != nil {
		sl.limits = plan.Cgroup.Limits
	}
	if lease != nil {
		sl.leased = lease.ID()
	}
	if sl.key, err = slotKey(plan, prog); err != nil {
		prog.Close()
		lease.Release()
		return nil, err
	}
	if err := sl.start(plan); err != nil {
		sl.Destroy()
		return nil, fmt.Errorf("prepare slot: %w", err)
	}
	// Without one, the run makes its own, as a cold run does.
	sl.anchor, _ = runfiles.PrepareAnchor(plan.Run.TmpRoot, s.ID, plan.Run.Owner[0], plan.Run.Owner[1])
	sl.readBase(plan)
	return sl, nil
}

// CheckSlot checks that slots like template can be made, as a run of it
// would be checked, without making one: the spec (Validate), its plan
// (BuildPlan) and, when the template names a cgroup parent, its cgroup
// leaf, made and removed at once. A server checks its slot profiles so at
// its start: a setting `run` refuses is refused there, with run's
// message, not met at every slot it tries. Without a named parent the
// leaf is not tried: a rootless server on a host with no delegated
// cgroup starts, and its runs say why they cannot have one (or degrade,
// when a request allows it), as before.
func CheckSlot(template *jail.Spec) error {
	s, err := template.Validate()
	if err != nil {
		return err
	}
	plan, _, err := jail.BuildPlan(s, jail.LookHost(&s.Spec))
	if err != nil {
		return err
	}
	if template.CgroupParent == "" {
		return nil
	}
	leaf, _, err := createLeaf(plan.Cgroup, plan.Run.TmpRoot)
	if err != nil {
		return err
	}
	if _, warn := closeLeaf(leaf, nil, nil, false); len(warn) > 0 {
		return fmt.Errorf("check slot: %s", strings.Join(warn, "; "))
	}
	return nil
}

// start makes the leaf and starts the init in it, stdio on /dev/null (the
// run's own comes with its config), checks its version, and has it build
// the plan's view when it can be built ahead (viewAhead).
func (sl *Slot) start(plan *jail.Plan) error {
	leaf, _, err := createLeaf(plan.Cgroup, plan.Run.TmpRoot)
	if err != nil {
		return err
	}
	sl.leaf = leaf
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	sl.conn, sl.spawner, err = initconn.StartSlot(sl.prog, leaf, procAttrIn(plan, leaf), []*os.File{null, null, null})
	if err != nil {
		return err
	}
	if err := sl.conn.AwaitHello(nil, nil); err != nil || !viewAhead(plan) {
		return err
	}
	cfg, err := withLimits(plan, leaf)
	if err != nil {
		return err
	}
	view := slotView(&cfg)
	return sl.conn.SendView(&view)
}

// readBase reads the leaf's usage of a slot whose init built its view
// ahead: the init's last act is its Ready, then it waits in recvmsg for
// its run's config and does nothing more until it comes (the slot's
// Go runtime idles too: measured, an idle slot's leaf gained 0 us of CPU
// from here to 1 s later, and its cpuacct.usage did not move in 20 s),
// so the usage read now is the one a run that takes the slot would read
// at its request, about 0.2 ms of v1 reads earlier (issue 36). Read after
// the anchor is made, hundreds of microseconds after the Ready, when the
// init's few microseconds from its Ready's write into recvmsg are over.
// A slot whose init built no view is read at its run's request: its init
// still sets up after its hello.
func (sl *Slot) readBase(plan *jail.Plan) {
	if sl.leaf == nil || !viewAhead(plan) {
		return
	}
	if u, err := sl.leaf.Usage(); err == nil {
		sl.base = &u
	}
}

// configFor is the config a run of cfg sends the slot's init: only its
// own part (protocol.RunPart: the command, environment, names, meminfo
// and the digest of the rest) when the slot built its view ahead, which
// the init checks against the view it built and completes from it; the
// whole config otherwise.
func (sl *Slot) configFor(cfg *protocol.Config) *protocol.Config {
	if sl.key.View == "" {
		return cfg
	}
	return runPart(cfg)
}

// slotView is the view of cfg a slot's init builds, with its digest.
func slotView(cfg *protocol.Config) protocol.Config {
	v := protocol.ViewOf(cfg)
	v.ViewSum = viewSum(&v)
	return v
}

// runPart is the run's part of cfg, with the digest of its view.
func runPart(cfg *protocol.Config) *protocol.Config {
	part := protocol.RunPart(cfg)
	v := protocol.ViewOf(cfg)
	part.ViewSum = viewSum(&v)
	return &part
}

// viewSum is the digest of a view (protocol.ViewOf's) that the slot's
// init is sent with it, and a run's part with its own: the init takes a
// run only when they agree. The view as data only: the identity of the
// host objects it binds is the key's (viewDigest), checked before.
func viewSum(v *protocol.Config) string {
	c := *v
	c.ViewSum = ""
	sum := sha256.Sum256(protocol.EncodeConfig(&c))
	return hex.EncodeToString(sum[:16])
}

// viewAhead says whether a slot builds the plan's view ahead of its run:
// when its run directory is a tmpfs of the disk budget. One bound from
// the host is made for the run (runfiles.CreateDir), and its bind would
// need it in the slot's view.
func viewAhead(p *jail.Plan) bool { return p.Init.Mounts.RunDirBytes > 0 }

// Current says whether a slot made now from the slot's template would
// have its key: the host's view (the system directories, /etc, the data
// dirs of the template's root, the objects it binds) is still the one
// the slot's was built from. It looks at most once a second
// (currentEvery): a slot that is not current is never taken anyway,
// since a run's key is made from the host's view at its request; the pool
// destroys it. One goroutine asks it (the pool's refill), outside the
// pool's lock, maybe while a run takes the slot: it reads only what the
// slot's making fixed.
func (sl *Slot) Current() bool {
	if time.Since(sl.checked) < currentEvery {
		return sl.current
	}
	sl.checked, sl.current = time.Now(), false
	s, err := sl.template.Validate()
	if err != nil {
		return false
	}
	if sl.leased != 0 {
		// As leaseIDs made the slot's: its key names the range.
		s.HostUID, s.HostGID, s.LeasedFrom = sl.leased, sl.leased, s.LeaseRange().String()
	}
	plan, _, err := jail.BuildPlan(s, jail.LookHost(&s.Spec))
	if err != nil {
		return false
	}
	key := planKey(plan)
	key.Init = sl.key.Init // MadeFrom's
	sl.current = key == sl.key
	return sl.current
}

// currentEvery is how often Current looks at the host again: a plan of
// the template is half a millisecond of a CPU the runs share.
const currentEvery = time.Second

// Key is what a run must match to take the slot (slotKey).
func (sl *Slot) Key() SlotKey { return sl.key }

// Made is when the slot was made.
func (sl *Slot) Made() time.Time { return sl.made }

// Destroy ends the slot's init and removes its leaf, then gives back its
// leased ids. A slot taken by a run is the run's to end: Destroy is for
// slots never used.
func (sl *Slot) Destroy() {
	if sl.conn != nil {
		sl.conn.Abort()
	}
	closeLeaf(sl.leaf, sl.spawner, sl.conn, false)
	sl.anchor.Discard() // a failure: a leftover the next sweep takes
	sl.prog.Close()
	sl.lease.Release()
	sl.lease = nil
}

// InitIdentity names the init program a run would exec now (its file's
// device, inode, size and change time): a slot made from another, an init
// replaced on disk since, is no longer of this key and is destroyed.
func InitIdentity() (string, error) {
	prog, err := initconn.Open()
	if err != nil {
		return "", err
	}
	defer prog.Close()
	return prog.Identity()
}

// MadeFrom says whether the slot's init is the one identity names.
func (sl *Slot) MadeFrom(identity string) bool { return sl.key.Init == identity }

// Slots hands a run a slot made for its key, or nil: the run starts cold.
type Slots func(key SlotKey) *Slot

// SlotKey is what a slot fixes of a run before its request: the
// namespaces and ID map it was born with, its leaf's place and
// controllers, the view it built ahead (viewAhead), and the init file it
// is. A run takes a slot whose key equals its plan's; the rest of the
// plan is the request's, built when it comes. Lists are joined (a key is
// comparable: ==, a map key).
type SlotKey struct {
	Namespaces string // their names in clone order, comma-separated
	// LeasedFrom is the range the slot's ids were leased from: any id of
	// it will do, a run that takes the slot takes its ids (takeSlot).
	// "": fixed ids, HostUID and HostGID.
	LeasedFrom       string
	HostUID, HostGID int
	Setgroups        bool
	Groups           string // the gids a rootless run keeps, comma-separated
	// CgroupParent and Controllers (the limited keys, sorted,
	// comma-separated) are the leaf's; Cgroup false: no leaf.
	Cgroup       bool
	CgroupParent string
	Controllers  string
	// View is a digest of the view the slot built (protocol.ViewOf): the
	// root's data dirs and links, the read-only and writable paths, the
	// system entries and /etc's files, the sizes, the CPUs, the network
	// mode, and what its init confined itself with ahead (the identity
	// and groups, the Landlock policy with the run directory's path as
	// the placeholder's, the seccomp policy: its program follows from the
	// policy and the init file, seccomp.Lookup's table compiled into it,
	// whose identity is Init). A run whose view differs in
	// anything but the run directory's name (and the meminfo's numbers,
	// written at its start) is another key. "": none built.
	View string
	// Init is the init file's identity (device, inode, size, change
	// time): an init replaced on disk, a new package, is another key.
	Init string
}

// slotKey is the key of a run of plan p with the init prog.
func slotKey(p *jail.Plan, prog *initconn.Program) (SlotKey, error) {
	k := planKey(p)
	id, err := prog.Identity()
	if err != nil {
		return SlotKey{}, err
	}
	k.Init = id
	return k, nil
}

// planKey is slotKey without the init: what of the plan a slot fixes.
func planKey(p *jail.Plan) SlotKey {
	var k SlotKey
	names := make([]string, len(p.Namespaces))
	for i, ns := range p.Namespaces {
		names[i] = ns.Name
	}
	k.Namespaces = strings.Join(names, ",")
	k.LeasedFrom, k.Setgroups = p.IDs.LeasedFrom, p.IDs.Setgroups
	if k.LeasedFrom == "" {
		k.HostUID, k.HostGID = p.IDs.HostUID, p.IDs.HostGID
	}
	gids := make([]string, len(p.IDs.Groups))
	for i, g := range p.IDs.Groups {
		gids[i] = strconv.Itoa(int(g.GID))
	}
	k.Groups = strings.Join(gids, ",")
	if c := p.Cgroup; c != nil {
		var keys []string
		for name, v := range c.Limits {
			if v.N != 0 || v.CPUs != 0 {
				keys = append(keys, name)
			}
		}
		slices.Sort(keys)
		k.Cgroup, k.CgroupParent, k.Controllers = true, c.Parent, strings.Join(keys, ",")
	}
	if viewAhead(p) {
		k.View = viewDigest(&p.Init)
	}
	return k
}

// viewDigest is SlotKey.View: the view as data, and the identity (device,
// inode) of each host object it binds, as the host has them now. A slot
// binds the objects its paths named when it was made: a data dir replaced
// on the host since (a new directory renamed in) is the same path but
// another view, and its slot must not serve a run that would bind the
// new one.
func viewDigest(c *protocol.Config) string {
	v := protocol.ViewOf(c)
	h := sha256.New()
	h.Write(protocol.EncodeConfig(&v))
	m := &c.Mounts
	sources := slices.Concat(m.ReadOnly, m.ReadWrite)
	for _, e := range m.System {
		if e.Symlink == "" {
			sources = append(sources, e.Path)
		}
	}
	// What is hashed per source is written into one buffer (it was a
	// fmt.Fprintf each: a run's key on its request path).
	var b []byte
	for _, src := range sources {
		b = append(b[:0], src...)
		var st unix.Stat_t
		if err := unix.Stat(src, &st); err != nil {
			b = append(append(append(b, ':'), err.Error()...), ';') // the init's open fails as it will for a cold run
		} else {
			b = append(strconv.AppendUint(append(strconv.AppendUint(append(b, ':'), st.Dev, 10), ':'), st.Ino, 10), ';')
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// takeSlot adopts a slot for the plan (and prog, the init a cold start
// would exec) if the caller has one: its leaf gets the run's limits and
// the usage so far is kept, to be taken off the run's. It returns the
// slot's init and the lease the run holds from then on (lease, the run's
// own, or the slot's). false: no slot fits (or its limits could not be
// written, and it is destroyed); the run starts cold.
func (sv *supervisor) takeSlot(prog *initconn.Program, lease *uidlease.Lease) (spawned, *uidlease.Lease, bool) {
	if sv.opts.Slots == nil {
		return spawned{}, lease, false
	}
	key, err := slotKey(sv.plan, prog)
	if err != nil {
		return spawned{}, lease, false
	}
	sl := sv.opts.Slots(key)
	if sl == nil {
		return spawned{}, lease, false
	}
	in := spawned{conn: sl.conn, spawner: sl.spawner, slot: sl, anchor: sl.anchor}
	sl.anchor = nil
	if sl.leaf != nil {
		wrote, err := sl.takeLimits(sv.plan.Cgroup.Limits)
		if err != nil {
			sv.warnings = append(sv.warnings, "a prepared slot could not take this run's limits ("+err.Error()+"): started cold")
			sl.anchor = in.anchor
			sl.Destroy()
			return spawned{}, lease, false
		}
		base := sl.base
		if base == nil || wrote {
			// Read now: none was read ahead, or the limits just
			// written may have moved the counters (a lower memory
			// limit reclaims, and may count a hit): the slot's.
			u, err := sl.leaf.Usage()
			if err != nil {
				sl.anchor = in.anchor
				sl.Destroy()
				return spawned{}, lease, false
			}
			base = &u
		}
		in.base, in.leaf, in.cgroup = base, sl.leaf, leafReport(sl.leaf)
	}
	if sl.lease != nil {
		// The slot's init was born with the slot's ids: the run gives
		// back its own and holds the slot's to its end.
		lease.Release()
		lease, sl.lease = sl.lease, nil
		sv.plan.RebindIDs(lease.ID())
	}
	sl.prog.Close() // exec'd long ago; the connection keeps its path for messages
	sv.clock.lap("slot")
	return in, lease, true
}

// takeLimits writes lim over the slot's leaf, unless they are the limits
// its start wrote: the same values again would only cost their writes
// (about 0.2 ms on v1), and nothing but the server writes a leaf's limits
// (the analysis sees its cgroup read-only). wrote: they were written.
func (sl *Slot) takeLimits(lim cgroupfs.Limits) (wrote bool, err error) {
	if maps.EqualFunc(sl.limits, lim, func(a, b cgroupfs.Value) bool {
		return a.N == b.N && a.CPUs == b.CPUs && slices.Equal(a.Devices, b.Devices)
	}) {
		return false, nil
	}
	return true, sl.leaf.SetLimits(lim)
}
