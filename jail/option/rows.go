package option

// Type is what an option's value is, as the schema gives it.
type Type string

const (
	String Type = "string" // one text (an ID, a name)
	Path   Type = "path"   // one host path
	Paths  Type = "paths"  // host paths (repeatable)
	Bool   Type = "bool"   // given or not
	Int    Type = "int"    // a whole number
	Words  Type = "words"  // texts (repeatable): names, NAME=VALUE entries
	Choice Type = "choice" // one word from a list (the network mode)
	Ports  Type = "ports"  // TCP port numbers, 1-65535
	Layers Type = "layers" // protections given up by name (opt-ins)
	Object Type = "object" // a JSON object (a profile's require_layers)
	Ignore Type = "ignore" // output_ignore: a list, or {"extend": [...]}
)

// Option is one run option that is not a limit (jail/limits holds
// those): its names in each language, what the schema says of its
// value, and the flag's text in --help.
type Option struct {
	Names
	Type        Type
	Placeholder string // the flag's value in --help: PATH
	Help        string // the flag's --help text, or the field's meaning
}

// RowNames makes an Option a Row.
func (o *Option) RowNames() Names { return o.Names }

// The rows. Help texts speak of other options by what they are (the
// tmp-root, the network mode), never by one language's name: the command
// line, the schema and the docs all show them.
var (
	ID = &Option{
		Names: Names{Flag: "id", Request: "id", Keyword: "analysis_id"}, Type: String,
		Help: "Analysis ID: letters, digits, '.', '_', '-' (at most 128). The run directory is <tmp-root>/scidex-analysis-<ID>.",
	}
	Command = &Option{
		Names: Names{Request: "command", Keyword: "argv"}, Type: Words,
		Help: "The command to run and its arguments, after '--': everything after '--' is passed untouched.",
	}
	Profile = &Option{
		Names: Names{Flag: "profile", Request: "profile", Keyword: "profile"}, Type: String,
		Help: "Profile of limits and permissions: default, notebook, post_process, tool, or one from the profiles file (see 'scidex-jail profiles').",
	}
	Config = &Option{
		Names: Names{Flag: "config", Request: "config", Keyword: "config"}, Type: Path, Placeholder: "FILE",
		Help: "Profiles file (JSON). Default: /etc/scidex-jail/profiles.json when it exists.",
	}
	TmpRoot = &Option{
		Names: Names{Flag: "tmp-root", Request: "tmp_root", Keyword: "tmp_root"}, Type: Path, Placeholder: "DIR",
		Help: "Absolute directory that holds the run directories.",
	}
	CgroupParent = &Option{
		Names: Names{Flag: "cgroup-parent", Request: "cgroup_parent", Keyword: "cgroup_parent"}, Type: Path, Placeholder: "PATH",
		Help: "Delegated cgroup under which a run's leaf is made. Default: the jail's own cgroup.",
	}
	UID = &Option{
		Names: Names{Flag: "uid", Request: "uid"}, Type: Int, Placeholder: "N",
		Help: "A fixed host uid for the analysis when scidex-jail runs as root (never 0; give the gid too). Default: each run leases a uid and gid of its own from the uid range.",
	}
	GID = &Option{
		Names: Names{Flag: "gid", Request: "gid"}, Type: Int, Placeholder: "N",
		Help: "A fixed host gid, with the uid (never 0).",
	}
	UIDRange = &Option{
		Names: Names{Flag: "uid-range", Request: "uid_range"}, Type: String, Placeholder: "FIRST-LAST",
		Help: "Host ids each run leases its own uid and gid from when scidex-jail runs as root and no fixed uid is given; no account, group, /etc/subuid or /etc/subgid range may use them (docs/security.md).",
	}
	Report = &Option{
		Names: Names{Flag: "report", Request: "report"}, Type: Path, Placeholder: "FILE",
		Help: "Write the JSON report to FILE (atomically); its directory must exist and be writable, outside every run directory. The one-line summary goes where the summary option says; the whole report after it if it cannot be delivered (exit 122).",
	}
	Root = &Option{
		Names: Names{Flag: "root", Request: "root", Keyword: "root"}, Type: Path, Placeholder: "DIR",
		Help: "The platform's checkout: its data/ and docs/ are readable (read-only) by the analysis. Default: the current directory.",
	}
	DataDirs = &Option{
		Names: Names{Field: "data_dirs"}, Type: Words,
		Help: "Directories of the root (relative to it) bound read-only when they exist, linked from the run directory.",
	}
	Inputs = &Option{
		Names: Names{Flag: "input", Request: "inputs", Keyword: "inputs"}, Type: Paths, Placeholder: "DIR",
		Help: "An earlier run's collected outputs, readable (read-only) at the same path (repeatable; the post_process profile needs one).",
	}
	ReadOnly = &Option{
		Names: Names{Flag: "ro", Field: "read_only", Request: "read_only", Keyword: "ro"}, Type: Paths, Placeholder: "PATH",
		Help: "Another host path readable (read-only) at the same path (repeatable).",
	}
	ReadWrite = &Option{
		Names: Names{Flag: "rw", Field: "read_write", Request: "read_write", Keyword: "rw"}, Type: Paths, Placeholder: "PATH",
		Help: "Another host path writable at the same path (repeatable).",
	}
	Keep = &Option{
		Names: Names{Flag: "keep", Request: "keep", Keyword: "keep"}, Type: Bool,
		Help: "Keep the run directory afterwards (default: removed).",
	}
	KeepScratch = &Option{
		Names: Names{Flag: "keep-scratch", Request: "keep_scratch"}, Type: Bool,
		Help: "For debugging: make the analysis' scratch (HOME, TMPDIR, caches) the run directory's .scidex-scratch/, so that it is listed, collected and kept with the outputs (default: never an output, removed with the run).",
	}
	Collect = &Option{
		Names: Names{Flag: "collect", Request: "collect", Keyword: "collect"}, Type: Path, Placeholder: "DIR",
		Help: "Copy the regular files of the run directory to DIR before it is removed (links are never followed). DIR must be new or empty, outside every run directory and every input.",
	}
	CollectMerge = &Option{
		Names: Names{Flag: "collect-merge", Request: "collect_merge"}, Type: Bool,
		Help: "Let the collect directory already hold files; one of the same name as an output is an error (delivery_failed), never overwritten.",
	}
	Env = &Option{
		Names: Names{Flag: "env", Field: "env", Request: "env", Keyword: "env"}, Type: Words, Placeholder: "K=V",
		Help: "Set an environment variable for the analysis (repeatable). The host's environment is not passed in.",
	}
	// Net is the network mode's row: its names. The modes themselves,
	// and what each switches on, are jail/netmode's.
	Net = &Option{
		Names: Names{Flag: "net", Field: "net", Request: "net", Keyword: "net"}, Type: Choice, Placeholder: "MODE",
		Help: "The network mode: one of the choices, each a row of jail/netmode's table (which gives the flag its help).",
	}
	AllowTCP = &Option{
		Names: Names{Flag: "allow-tcp", Field: "allow_tcp", Request: "allow_tcp", Keyword: "allow_tcp"}, Type: Ports, Placeholder: "PORT",
		Help: "Outbound TCP ports allowed, for a network mode that takes them. PostgreSQL's 5432 can never be allowed.",
	}
	AllowHosts = &Option{
		Names: Names{Flag: "allow-host", Field: "allow_hosts", Request: "allow_hosts", Keyword: "allow_hosts"}, Type: Words, Placeholder: "HOST",
		Help: "A host the analysis may reach by name, for a network mode that takes hosts (repeatable): a name (eutils.ncbi.nlm.nih.gov), every name under a domain (*.uniprot.org), on port 443 unless one is given (files.rcsb.org:80). Never an address; PostgreSQL's 5432 can never be allowed.",
	}
	AllowRanges = &Option{
		Names: Names{Flag: "allow-range", Field: "allow_ranges", Request: "allow_ranges", Keyword: "allow_ranges"}, Type: Words, Placeholder: "CIDR",
		Help: "An address range (CIDR, e.g. 10.20.0.0/16) an allowed host may resolve into although it is not public (repeatable): an institute's own network. Loopback, private, link-local and the other non-public ranges are refused otherwise.",
	}
	DBPorts = &Option{
		Names: Names{Field: "db_ports"}, Type: Ports,
		Help: "Database ports no run may reach, whatever the allowed ports say; must keep PostgreSQL's 5432.",
	}
	AllowDegraded = &Option{
		Names: Names{Flag: "allow-degraded", Field: "allow_degraded", Request: "allow_degraded"}, Type: Layers, Placeholder: "LAYER",
		Help: "Run even if the kernel cannot enforce LAYER in full (landlock); the report lists what was lost.",
	}
	UnsafeDisable = &Option{
		Names: Names{Flag: "unsafe-disable", Request: "unsafe_disable", Keyword: "unsafe_disable"}, Type: Layers, Placeholder: "LAYER",
		Help: "Turn a protection off (landlock, seccomp, cgroup): for benchmarks and debugging only; recorded in the report.",
	}
	OutputIgnore = &Option{
		Names: Names{Field: "output_ignore"}, Type: Ignore,
		Help: "Names never listed as outputs, at any depth: a list replaces the base profile's, {\"extend\": [...]} adds to it.",
	}
	RequireInput = &Option{
		Names: Names{Field: "require_input"}, Type: Bool,
		Help: "A run of the profile must be given at least one input.",
	}
	RequireLayers = &Option{
		Names: Names{Field: "require_layers"}, Type: Object,
		Help: "More layers than the default for a promise, by promise.",
	}
)

// All is the table, in the order the schema gives it.
var All = []*Option{
	ID, Command, Profile, Config, TmpRoot, CgroupParent, UID, GID, UIDRange, Report,
	Root, DataDirs, Inputs, ReadOnly, ReadWrite, Keep, KeepScratch, Collect, CollectMerge,
	Env, Net, AllowTCP, AllowHosts, AllowRanges, DBPorts, AllowDegraded, UnsafeDisable, OutputIgnore, RequireInput, RequireLayers,
}

// ByFlag is the row of the flag called flag (without dashes), nil if none.
func ByFlag(flag string) *Option { return by(Flag, flag) }

// ByField is the row of the profile field called field, nil if none.
func ByField(field string) *Option { return by(ProfileField, field) }

func by(w Where, name string) *Option {
	for _, o := range All {
		if name != "" && o.In(w) == name {
			return o
		}
	}
	return nil
}
