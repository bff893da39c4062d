package cgroupfs

import "fmt"

// The controllers a leaf uses, in one list: the order in which their
// settings are written (memory, then cpu, then pids) and in which a v1
// leaf's hierarchies are made (the first directory holds the leaf's lock),
// each with its names on both versions and the keys of Limits it reads.
// Everything else in the package (the settings, the controllers a leaf
// needs, the v1 hierarchies it looks for, the usage it reads, the fixes
// for a missing one) walks this list; nothing registers itself.
var controllers = []*controller{
	{name: "memory", v1: "memory", kernel: "CONFIG_MEMCG", keys: []key{{MemoryKey, Whole}, {SwapKey, Whole}},
		always: "peak and OOM accounting", set: memorySettings, stat: statMemory},
	{name: "cpu", v1: "cpu", kernel: "CONFIG_CFS_BANDWIDTH", keys: []key{{CPUsKey, Quota}},
		isSet: func(l Limits) bool { return l[CPUsKey].CPUs > 0 }, set: cpuSettings, stat: statCPU, check: checkCPUs},
	// cpuacct is v1's CPU time (v2's cpu.stat has it): accounting only,
	// taken when mounted, never required.
	{v1: "cpuacct", kernel: "CONFIG_CGROUP_CPUACCT", stat: statCPUAcct},
	{name: "pids", v1: "pids", kernel: "CONFIG_CGROUP_PIDS", keys: []key{{PIDsKey, Whole}},
		isSet: func(l Limits) bool { return l[PIDsKey].N > 0 }, set: pidsSettings, stat: statPids},
}

// controller is one row of controllers.
type controller struct {
	name   string // its name on cgroup v2 ("": v1 only)
	v1     string // its hierarchy's name on cgroup v1 ("": v2 only), e.g. blkio for v2's io
	kernel string // the kernel option that builds it, for the fixes
	keys   []key  // the keys of Limits it reads
	// always says why every leaf needs it ("": only limits that set one
	// of its keys, as isSet says, or none: accounting taken when there).
	always string
	isSet  func(Limits) bool
	// set is what it writes for l on version (2 or 1), without
	// Setting.Controller, which Settings fills in.
	set   func(version int, l Limits) []Setting
	stat  func(read reader, version int, dir string, u *Usage) error // reads its counters into u, each file through read
	check func(Limits) error                                         // its own checks of its keys' values (nil: none)
}

// key is one key of Limits and the form of its value.
type key struct {
	name string
	kind Kind
}

// Kind is the form of a key's Value.
type Kind int

const (
	Whole     Kind = iota // Value.N: bytes, processes
	Quota                 // Value.CPUs
	PerDevice             // Value.Devices: one value per block device (io.max)
)

// Device is a block device by its numbers, as io.max and v1's blkio files
// name it.
type Device struct{ Major, Minor uint32 }

// String is the device as the kernel's files write it: "8:0".
func (d Device) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// DeviceValue is one device's value of a PerDevice key.
type DeviceValue struct {
	Device Device
	N      int64
}

// on is c's name on cgroup version version; "" when it has none there.
func (c *controller) on(version int) string {
	if version == 1 {
		return c.v1
	}
	return c.name
}

// needed reports whether a leaf with limits l requires c.
func (c *controller) needed(l Limits) bool {
	return c.always != "" || c.isSet != nil && c.isSet(l)
}

// controllerOf is the controller that declares key k, nil if none does.
func controllerOf(k string) (*controller, Kind) {
	for _, c := range controllers {
		for _, ck := range c.keys {
			if ck.name == k {
				return c, ck.kind
			}
		}
	}
	return nil, 0
}

// Keys are the keys of Limits the controllers declare, in order.
func Keys() []string {
	var out []string
	for _, c := range controllers {
		for _, k := range c.keys {
			out = append(out, k.name)
		}
	}
	return out
}

// every is a Limits that uses every controller.
func every() Limits {
	l := Limits{}
	for _, c := range controllers {
		for _, k := range c.keys {
			switch k.kind {
			case Quota:
				l[k.name] = Value{CPUs: 1}
			case PerDevice:
				l[k.name] = Value{Devices: []DeviceValue{{N: 1}}}
			default:
				l[k.name] = Value{N: 1}
			}
		}
	}
	return l
}

// Need is a controller a leaf needs on one cgroup version, as [Needs]
// lists them.
type Need struct {
	Controller string   // its name on that version: v2's, or its v1 hierarchy's
	Keys       []string // the keys of Limits it reads
	// Always says why every leaf needs it, whatever its limits ("peak and
	// OOM accounting"); "" when only its keys being set need it, so that
	// switching those limits off drops the need.
	Always string
}

// Needs are the controllers a leaf with limits l requires on cgroup
// version version (2 or 1; 0, not known yet, names them as v2 does), in
// the list's order: what Create refuses to go without.
func Needs(version int, l Limits) []Need {
	var out []Need
	for _, c := range controllers {
		name := c.on(version)
		if name == "" || !c.needed(l) {
			continue
		}
		n := Need{Controller: name, Always: c.always}
		for _, k := range c.keys {
			n.Keys = append(n.Keys, k.name)
		}
		out = append(out, n)
	}
	return out
}

// controllersOn are the names of the controllers l needs on version, in
// order.
func (l Limits) controllersOn(version int) []string {
	var out []string
	for _, n := range Needs(version, l) {
		out = append(out, n.Controller)
	}
	return out
}

// byName is the controller named name on version, nil if none is.
func byName(version int, name string) *controller {
	for _, c := range controllers {
		if c.on(version) == name {
			return c
		}
	}
	return nil
}
