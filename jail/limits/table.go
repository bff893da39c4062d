package limits

import "time"

// Kind is what a limit's value is; it decides how its text is read and
// its value written.
type Kind string

const (
	Size     Kind = "size"     // bytes, ParseSize: 512M, 2G
	Duration Kind = "duration" // Go's time.ParseDuration: 90s, 1.5m
	Count    Kind = "count"    // a whole number
	CPUs     Kind = "cpus"     // a decimal number of CPUs
)

// Zero is what a 0 written out means for a limit.
type Zero string

const (
	ZeroIsNone   Zero = "none"    // 0 switches the limit off, as none does
	ZeroRefused  Zero = "refused" // 0 is refused: an absence is written none
	ZeroIsAmount Zero = "amount"  // 0 is an amount (no swap, SIGKILL at once)
)

// Bound is a limit's smallest or largest value, in the kind's unit (bytes,
// nanoseconds, a count, CPUs); a zero Value is no bound.
type Bound struct {
	Value float64
	// Why follows "is below" or "is above" in the message: the bound as a
	// user reads it, and what to give instead.
	Why string
}

// Doc is a limit's row of the README's limits table.
type Doc struct {
	Value      string // what the value is, with examples
	OffNote    string // added to the "off" column, e.g. why 0 is refused
	EnforcedBy string
	Exceeded   string // what happens when the run goes over it
}

// Limit is one row of the table.
type Limit struct {
	Name    string // the limit's name: limits.none in the report, the schema
	Kind    Kind
	None    bool // the word none switches it off
	Zero    Zero
	ZeroWhy string // for a row that refuses 0 and has no none: why
	Min     Bound
	Max     Bound
	// Tmpfs names the tmpfs a size limit is the size of: it is memory,
	// so the size is at most the memory limit, or without one the
	// machine's memory; TmpfsOff says what switching it off does.
	Tmpfs, TmpfsOff string

	Flag   string // the command line's flag, without its dashes
	Field  string // the profiles file's field
	Report string // the report's field, a path below the report's top level
	// ReportOptional: the report's field is not required by its JSON
	// Schema: a row added within the report's schema version sets it, as
	// a report written before lacks the field.
	ReportOptional bool
	// Cgroup is the key of cgroupfs.Limits the value is written to the
	// run's cgroup leaf as ("" for a limit the leaf does not hold): the
	// controller of cgroupfs's list (cgroupfs/controllers.go) that declares
	// the key writes it.
	Cgroup string

	// The words of the messages: Unit counts the value ("0 CPUs is
	// refused"), Give says what to give, Syntax what a readable value looks
	// like (Give when empty), Off what none means ("no quota").
	Unit, Give, Syntax, Off string
	// Noun names the value where kong finds none: "expected size value".
	Noun string
	// Placeholder and Help are the flag's in --help.
	Placeholder, Help string
	Doc               Doc
}

// The bounds the kernel and the jail set.
const (
	// MaxCPUs bounds the CPU quota: far above any machine this runs on,
	// far below what would overflow the kernel's quota arithmetic.
	MaxCPUs = 4096
	// MinCPUs is the kernel's smallest quota (1 ms per 100 ms period;
	// cgroupfs.MinCPUs, which a test holds equal).
	MinCPUs = 0.01
	// MaxPIDs is the kernel's PID_MAX_LIMIT: pids.max refuses more.
	MaxPIDs = 1 << 22
	// MinPIDs: the init (a Go program, up to 8 threads) and the target's
	// first process must fit with room to spare.
	MinPIDs = 16
	// MaxOutputEntries bounds the entry budget: at 20 KiB a report entry
	// at most, a report of this many is 20 GiB, which nothing should hold.
	MaxOutputEntries = 1 << 20
	// MinMemory: not even the jail's init fits in less.
	MinMemory = 8 << 20
	// MinDisk: a tmpfs smaller than this is of no use.
	MinDisk = 64 << 10
	// MinStdio: half a stream's budget is its head and half its tail;
	// less than 8 KiB at each end would give the caller less of a stream
	// than the report's own 4 KiB tail (a ring of its own) already keeps.
	MinStdio = 16 << 10
)

// NoLimit is the word that switches a limit off.
const NoLimit = "none"

// The rows, in the order the report, the schema and the README give them.
var (
	Timeout = &Limit{
		Name: "timeout", Kind: Duration, None: true, Zero: ZeroIsNone,
		Flag: "timeout", Field: "timeout", Report: "limits.timeout_seconds",
		Give: "a duration such as 90s or 30m", Off: "no timeout", Noun: "duration",
		Placeholder: "DUR", Help: "Wall-clock budget, e.g. 90s, 30m, 1.5s (none or 0 = no timeout). On expiry: SIGTERM, then after the grace period every process is killed.",
		Doc: Doc{Value: "duration (`90s`, `30m`, `1.5s`)", EnforcedBy: "the supervisor's clock", Exceeded: "SIGTERM, then after `grace` SIGKILL to every process: `timeout`"},
	}
	Grace = &Limit{
		Name: "grace", Kind: Duration, Zero: ZeroIsAmount,
		Flag: "grace", Field: "grace", Report: "limits.grace_seconds",
		Give: "a duration such as 5s or 500ms (0 = SIGKILL at once)", Noun: "duration",
		Placeholder: "DUR", Help: "Time between SIGTERM and SIGKILL on timeout or cancel.",
		Doc: Doc{Value: "duration (`0`: SIGKILL at once)"},
	}
	Memory = &Limit{
		Name: "memory", Kind: Size, None: true, Zero: ZeroIsNone,
		Min:  Bound{MinMemory, "8M: not even the jail's init fits; give e.g. 512M or 2G"},
		Flag: "memory", Field: "memory", Report: "limits.memory_bytes", Cgroup: "memory",
		Unit: "bytes", Give: "a size such as 512M or 2G", Off: "no limit", Noun: "size",
		Placeholder: "SIZE", Help: "Memory limit of the run's cgroup, e.g. 512M, 2G (binary units; none or 0 = no limit). The run directory's tmpfs counts toward it.",
		Doc: Doc{Value: "size (`512M`, `2G`; binary units; at least 8M)", EnforcedBy: "cgroup `memory.max`", Exceeded: "the OOM killer: `oom_killed`"},
	}
	Swap = &Limit{
		Name: "swap", Kind: Size, Zero: ZeroIsAmount,
		Flag: "swap", Field: "swap", Report: "limits.swap_bytes", Cgroup: "swap",
		Unit: "bytes", Give: "a size such as 512M (0 = no swap)", Noun: "size",
		Placeholder: "SIZE", Help: "Swap the run may use (default 0).",
		Doc: Doc{Value: "size (`0`: no swap)", EnforcedBy: "cgroup `memory.swap.max`"},
	}
	CPUQuota = &Limit{
		Name: "cpus", Kind: CPUs, None: true, Zero: ZeroRefused,
		Min:  Bound{MinCPUs, "the kernel's smallest quota of 0.01: give at least 0.01, or none for no quota"},
		Max:  Bound{MaxCPUs, "4096: give the CPUs the run may use, e.g. 2, or none for no quota"},
		Flag: "cpus", Field: "cpus", Report: "limits.cpus", Cgroup: "cpus",
		Unit: "CPUs", Give: "a quota such as 0.5 or 2", Syntax: "a decimal number such as 0.5 or 2", Off: "no quota", Noun: "CPU quota",
		Placeholder: "N", Help: "CPU quota in CPUs, e.g. 0.5 or 2 (none = no quota; 0 is refused).",
		Doc: Doc{Value: "0.01 to 4096", EnforcedBy: "cgroup `cpu.max`", Exceeded: "throttled, counted in `enforced.cgroup.usage`"},
	}
	PIDs = &Limit{
		Name: "pids", Kind: Count, None: true, Zero: ZeroRefused,
		Min:  Bound{MinPIDs, "16: the limit counts threads, the jail's init alone holds up to 8 and the analysis' runtime more; give e.g. 256"},
		Max:  Bound{MaxPIDs, "the kernel's limit of 4194304 processes: give e.g. 512, or none for no limit"},
		Flag: "pids", Field: "pids", Report: "limits.pids", Cgroup: "pids",
		Unit: "processes", Give: "a limit such as 512", Off: "no limit", Noun: "process limit",
		Placeholder: "N", Help: "Limit on processes and threads, 16 to 4194304 (none = no limit; 0 is refused).",
		Doc: Doc{Value: "16 to 4194304 (`PID_MAX_LIMIT`), processes *and threads*", OffNote: "a zero is a typo or a template's slip, and the PID limit is what stops a fork bomb",
			EnforcedBy: "cgroup `pids.max`", Exceeded: "fork fails: `pids_limit`"},
	}
	Disk = &Limit{
		Name: "disk", Kind: Size, None: true, Zero: ZeroIsNone,
		Min:   Bound{MinDisk, "64K: too small to be useful; give at least 64K, or none for no budget"},
		Tmpfs: "the run directory's tmpfs", TmpfsOff: "the run directory then lives on the tmp-root's filesystem",
		Flag: "disk", Field: "disk", Report: "limits.disk_bytes",
		Unit: "bytes", Give: "a size such as 1G", Off: "no budget", Noun: "size",
		Placeholder: "SIZE", Help: "Size budget of the run directory, a tmpfs: writes beyond it fail with ENOSPC; at most the memory limit (none or 0 = no budget: the directory lives on the tmp-root's filesystem).",
		Doc: Doc{Value: "size, at most `memory`", OffNote: "the directory lives on the tmp-root's file system",
			EnforcedBy: "the run directory's tmpfs, shared with the scratch", Exceeded: "ENOSPC: `disk_limit`"},
	}
	Shm = &Limit{
		Name: "shm", Kind: Size, Zero: ZeroRefused,
		ZeroWhy: "/dev/shm is always a private tmpfs and cannot be switched off; give its size, e.g. 64M",
		Tmpfs:   "/dev/shm",
		Flag:    "shm", Field: "shm", Report: "limits.shm_bytes",
		Unit: "bytes", Give: "a size such as 64M", Noun: "size",
		Placeholder: "SIZE", Help: "Size of the private /dev/shm (more than 0, at most the memory limit).",
		Doc: Doc{Value: "size, more than 0, at most `memory`", EnforcedBy: "the private `/dev/shm` tmpfs", Exceeded: "writes fail (ENOSPC)"},
	}
	OutputEntries = &Limit{
		Name: "output_entries", Kind: Count, None: true, Zero: ZeroRefused,
		Max:  Bound{MaxOutputEntries, "1048576: give e.g. 10000, or none for no budget"},
		Flag: "output-entries", Field: "output_entries", Report: "limits.outputs.entries",
		Unit: "entries", Give: "a budget such as 10000", Off: "no budget", Noun: "number of entries",
		Placeholder: "N", Help: "Budget of entries listed in the run directory afterwards; a path counts one more per 256 bytes (none = no budget; 0 is refused). Over it: status output_limit, exit 123.",
		Doc: Doc{Value: "count, default 10000; an entry counts 1, plus 1 per full 256 bytes of its path or link target", EnforcedBy: "the supervisor's listing", Exceeded: "`output_limit`"},
	}
	OutputBytes = &Limit{
		Name: "output_bytes", Kind: Size, None: true, Zero: ZeroRefused,
		Flag: "output-bytes", Field: "output_bytes", Report: "limits.outputs.bytes",
		Unit: "bytes", Give: "a budget such as 1G", Off: "no budget", Noun: "size",
		Placeholder: "SIZE", Help: "Budget of bytes hashed and copied from the run directory in all, at apparent size (a sparse file counts its holes, a hard link each time). Default: the profile's, at most the disk budget (none = no budget; 0 is refused).",
		Doc: Doc{Value: "size, default the profile's `disk`: bytes hashed and copied in all, at apparent size (`st_size`)", EnforcedBy: "the supervisor's hashing and copying", Exceeded: "`output_limit`; the file is listed, not hashed or copied"},
	}
	OutputFileBytes = &Limit{
		Name: "output_file_bytes", Kind: Size, None: true, Zero: ZeroRefused,
		Flag: "output-file-bytes", Field: "output_file_bytes", Report: "limits.outputs.file_bytes",
		Unit: "bytes", Give: "a budget such as 1G", Off: "no budget", Noun: "size",
		Placeholder: "SIZE", Help: "Budget of bytes of one output file, at apparent size. Default: the profile's, at most the disk budget (none = no budget; 0 is refused).",
		Doc: Doc{Value: "size, default the profile's `disk`: bytes of one file, at apparent size", EnforcedBy: "the supervisor's hashing and copying", Exceeded: "`output_limit`; the file is listed, not hashed or copied"},
	}
	OutputTime = &Limit{
		Name: "output_time", Kind: Duration, None: true, Zero: ZeroRefused,
		Flag: "output-time", Field: "output_time", Report: "limits.outputs.time_seconds",
		Give: "a positive duration such as 3m", Off: "no budget", Noun: "duration",
		Placeholder: "DUR", Help: "Wall-time budget of the work after the analysis ends: listing, hashing, copying (none = no budget; 0 is refused).",
		Doc: Doc{Value: "duration, default 3m: the whole post-run work (listing, hashing, copying)", EnforcedBy: "the supervisor's clock", Exceeded: "`output_limit`"},
	}
	StdioBytes = &Limit{
		Name: "stdio_bytes", Kind: Size, None: true, Zero: ZeroRefused,
		Min:  Bound{MinStdio, "16K: half is the stream's head, half its tail, 8K each at the least; give e.g. 8M, or none for no budget"},
		Flag: "stdio-bytes", Field: "stdio_bytes", Report: "limits.stdio_bytes", ReportOptional: true,
		Unit: "bytes", Give: "a budget such as 8M", Off: "no budget", Noun: "size",
		Placeholder: "SIZE", Help: "Budget of bytes of each of the analysis' stdout and stderr that reach the caller (not a terminal): the first half delivered as written, the last half at the end, the middle counted and dropped with one line saying so (default 8M; none = no budget; 0 is refused).",
		Doc: Doc{Value: "size per stream, default 8M: half head, half tail; a terminal is not bounded", EnforcedBy: "the supervisor's relay of stdout and stderr", Exceeded: "the middle dropped with a marker line; `streams` and the notes say how much"},
	}
)

// The egress mode's budgets (jail/egress's Budgets): what a run's
// connections out may cost, per run (bytes each way, connections) and per
// connection (time). They bound every run; only a run in the egress mode
// has connections to spend them on. A run that should
// reach nothing has the none network mode; none (or 0) is no budget, as
// for the output budgets, asked for by name.
var (
	EgressConnections = &Limit{
		Name: "egress_connections", Kind: Count, None: true, Zero: ZeroIsNone,
		Max:  Bound{MaxEgressConnections, "1048576: give e.g. 1024"},
		Flag: "egress-connections", Field: "egress_connections", Report: "limits.egress.connections", ReportOptional: true,
		Unit: "connections", Give: "a budget such as 1024", Off: "no budget", Noun: "number of connections",
		Placeholder: "N", Help: "Budget of connections the analysis opens in the egress network mode, allowed or refused, in the whole run (none or 0 = no budget).",
		Doc: Doc{Value: "count, default 1024, allowed or refused", EnforcedBy: "the supervisor's egress engine",
			Exceeded: "the supervisor stops listening: later connections are refused by the kernel; `egress` and the notes say so"},
	}
	EgressUpload = &Limit{
		Name: "egress_upload", Kind: Size, None: true, Zero: ZeroIsNone,
		Flag: "egress-upload", Field: "egress_upload", Report: "limits.egress.upload_bytes", ReportOptional: true,
		Unit: "bytes", Give: "a budget such as 256M", Off: "no budget", Noun: "size",
		Placeholder: "SIZE", Help: "Budget of bytes the analysis sends out in the egress network mode, all connections together (none or 0 = no budget).",
		Doc: Doc{Value: "size, default 256M, all connections together", EnforcedBy: "the supervisor's egress engine",
			Exceeded: "the connection is closed (`cut`), no byte past the budget relayed; `egress` and the notes say so"},
	}
	EgressDownload = &Limit{
		Name: "egress_download", Kind: Size, None: true, Zero: ZeroIsNone,
		Flag: "egress-download", Field: "egress_download", Report: "limits.egress.download_bytes", ReportOptional: true,
		Unit: "bytes", Give: "a budget such as 4G", Off: "no budget", Noun: "size",
		Placeholder: "SIZE", Help: "Budget of bytes the analysis receives in the egress network mode, all connections together (none or 0 = no budget).",
		Doc: Doc{Value: "size, default 4G, all connections together", EnforcedBy: "the supervisor's egress engine",
			Exceeded: "the connection is closed (`cut`); `egress` and the notes say so"},
	}
	EgressConnTime = &Limit{
		Name: "egress_connection_time", Kind: Duration, None: true, Zero: ZeroIsNone,
		Flag: "egress-connection-time", Field: "egress_connection_time", Report: "limits.egress.connection_seconds", ReportOptional: true,
		Give: "a duration such as 15m", Off: "no budget", Noun: "duration",
		Placeholder: "DUR", Help: "How long one connection of the egress network mode may stay open (none or 0 = no budget).",
		Doc: Doc{Value: "duration, default 15m, per connection", EnforcedBy: "the supervisor's egress engine",
			Exceeded: "the connection is closed (`cut`); `egress` and the notes say so"},
	}
)

// MaxEgressConnections bounds the connections budget: each is an entry
// the supervisor decides on, in its own process.
const MaxEgressConnections = 1 << 20

// All is the table, in order.
var All = []*Limit{Timeout, Grace, Memory, Swap, CPUQuota, PIDs, Disk, Shm, OutputEntries, OutputBytes, OutputFileBytes, OutputTime, StdioBytes,
	EgressConnections, EgressUpload, EgressDownload, EgressConnTime}

// ByName is the row of the limit called name, nil if there is none.
func ByName(name string) *Limit {
	for _, l := range All {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// ByFlag is the row of the flag called flag (without dashes), nil if none.
func ByFlag(flag string) *Limit {
	for _, l := range All {
		if l.Flag == flag {
			return l
		}
	}
	return nil
}

// unitOf is the kind's base unit, the schema's: what Bound values count.
func unitOf(k Kind) string {
	switch k {
	case Size:
		return "bytes"
	case Duration:
		return "seconds"
	case Count:
		return "count"
	}
	return "CPUs"
}

// scale turns a Bound's value into the schema's unit.
func scale(k Kind, v float64) float64 {
	if k == Duration {
		return v / float64(time.Second)
	}
	return v
}
