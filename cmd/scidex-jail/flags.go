package main

import (
	"encoding"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail"
)

// The value types of the limit flags. Each reads its flag with jail's
// parser of its kind, so the command line and the profiles file follow one
// rule (README, "Limits"); kong calls Decode while it parses, and a
// refused value ends the parse with the flag's name and the parser's
// message. The flags are pointers: nil is "not given", so the profile's
// value stands, where 0 or none given on the command line overrides it.
type (
	timeout   time.Duration // ParseTimeout: none and 0 = no timeout
	grace     time.Duration // a duration, 0 = SIGKILL at once; never none
	sizeLimit int64         // ParseSizeLimit: memory, disk; none and 0 = no limit
	byteSize  int64         // ParseSize: swap, shm; never none
	cpuQuota  float64       // ParseCPUs: none = no quota, 0 refused
	pidLimit  int64         // ParsePIDs: none = no limit, 0 refused
	tcpPort   uint16        // 1-65535
	// Output budgets: none = no budget, 0 refused (jail.OutputBudget).
	outputEntries int64         // ParseOutputEntries
	outputSize    int64         // ParseOutputSize
	outputTime    time.Duration // ParseOutputTime
)

// decode reads one flag value into v for kong, naming its kind when the
// value is missing ("expected duration value but got ...").
func decode(ctx *kong.DecodeContext, kind string, v encoding.TextUnmarshaler) error {
	var s string
	if err := ctx.Scan.PopValueInto(kind, &s); err != nil {
		return err
	}
	return v.UnmarshalText([]byte(s))
}

func (v *timeout) Decode(ctx *kong.DecodeContext) error   { return decode(ctx, "duration", v) }
func (v *grace) Decode(ctx *kong.DecodeContext) error     { return decode(ctx, "duration", v) }
func (v *sizeLimit) Decode(ctx *kong.DecodeContext) error { return decode(ctx, "size", v) }
func (v *byteSize) Decode(ctx *kong.DecodeContext) error  { return decode(ctx, "size", v) }
func (v *cpuQuota) Decode(ctx *kong.DecodeContext) error  { return decode(ctx, "CPU quota", v) }
func (v *pidLimit) Decode(ctx *kong.DecodeContext) error  { return decode(ctx, "process limit", v) }
func (v *tcpPort) Decode(ctx *kong.DecodeContext) error   { return decode(ctx, "port", v) }
func (v *outputEntries) Decode(ctx *kong.DecodeContext) error {
	return decode(ctx, "number of entries", v)
}
func (v *outputSize) Decode(ctx *kong.DecodeContext) error { return decode(ctx, "size", v) }
func (v *outputTime) Decode(ctx *kong.DecodeContext) error { return decode(ctx, "duration", v) }

func (v *outputEntries) UnmarshalText(b []byte) error {
	n, err := jail.ParseOutputEntries(string(b))
	*v = outputEntries(n)
	return err
}

func (v *outputSize) UnmarshalText(b []byte) error {
	n, err := jail.ParseOutputSize(string(b))
	*v = outputSize(n)
	return err
}

func (v *outputTime) UnmarshalText(b []byte) error {
	d, err := jail.ParseOutputTime(string(b))
	*v = outputTime(d)
	return err
}

func (v *timeout) UnmarshalText(b []byte) error {
	d, err := jail.ParseTimeout(string(b))
	*v = timeout(d)
	return err
}

func (v *grace) UnmarshalText(b []byte) error {
	d, err := time.ParseDuration(string(b))
	if err != nil || d < 0 {
		return fmt.Errorf("%q: give a duration such as 5s or 500ms (0 = SIGKILL at once)", b)
	}
	*v = grace(d)
	return nil
}

func (v *sizeLimit) UnmarshalText(b []byte) error {
	n, err := jail.ParseSizeLimit(string(b))
	*v = sizeLimit(n)
	return err
}

func (v *byteSize) UnmarshalText(b []byte) error {
	n, err := jail.ParseSize(string(b))
	*v = byteSize(n)
	return err
}

func (v *cpuQuota) UnmarshalText(b []byte) error {
	n, err := jail.ParseCPUs(string(b))
	*v = cpuQuota(n)
	return err
}

func (v *pidLimit) UnmarshalText(b []byte) error {
	n, err := jail.ParsePIDs(string(b))
	*v = pidLimit(n)
	return err
}

func (v *tcpPort) UnmarshalText(b []byte) error {
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("%q: give TCP port numbers 1-65535, comma-separated", b)
	}
	*v = tcpPort(n)
	return nil
}

// over puts a flag's value over the profile's, when the flag was given.
func over[F, T ~int64 | ~float64](dst *T, flag *F) {
	if flag != nil {
		*dst = T(*flag)
	}
}

// limitFlags are run's limits; each left out keeps the profile's value.
type limitFlags struct {
	Timeout *timeout   `name:"timeout" placeholder:"DUR" help:"Wall-clock budget, e.g. 90s, 30m, 1.5s (none or 0 = no timeout). On expiry: SIGTERM, then after --grace every process is killed."`
	Grace   *grace     `name:"grace" placeholder:"DUR" help:"Time between SIGTERM and SIGKILL on timeout or cancel."`
	Memory  *sizeLimit `name:"memory" placeholder:"SIZE" help:"Memory limit of the run's cgroup, e.g. 512M, 2G (binary units; none or 0 = no limit). The run directory's tmpfs counts toward it."`
	Swap    *byteSize  `name:"swap" placeholder:"SIZE" help:"Swap the run may use (default 0)."`
	CPUs    *cpuQuota  `name:"cpus" placeholder:"N" help:"CPU quota in CPUs, e.g. 0.5 or 2 (none = no quota; 0 is refused)."`
	PIDs    *pidLimit  `name:"pids" placeholder:"N" help:"Limit on processes and threads, 16 to 4194304 (none = no limit; 0 is refused)."`
	Disk    *sizeLimit `name:"disk" placeholder:"SIZE" help:"Size budget of the run directory, a tmpfs: writes beyond it fail with ENOSPC; at most --memory (none or 0 = no budget: the directory lives on --tmp-root's filesystem)."`
	Shm     *byteSize  `name:"shm" placeholder:"SIZE" help:"Size of the private /dev/shm (more than 0, at most --memory)."`

	OutputEntries   *outputEntries `name:"output-entries" placeholder:"N" help:"Budget of entries listed in the run directory afterwards; a path counts one more per 256 bytes (none = no budget; 0 is refused). Over it: status output_limit, exit 123."`
	OutputBytes     *outputSize    `name:"output-bytes" placeholder:"SIZE" help:"Budget of bytes hashed and copied from the run directory in all, at apparent size (a sparse file counts its holes, a hard link each time). Default: the profile's, at most --disk (none = no budget; 0 is refused)."`
	OutputFileBytes *outputSize    `name:"output-file-bytes" placeholder:"SIZE" help:"Budget of bytes of one output file, at apparent size. Default: the profile's, at most --disk (none = no budget; 0 is refused)."`
	OutputTime      *outputTime    `name:"output-time" placeholder:"DUR" help:"Wall-time budget of the work after the analysis ends: listing, hashing, copying (none = no budget; 0 is refused)."`

	Net      jail.NetMode `name:"net" placeholder:"MODE" help:"Network: none (no network), loopback (lo only, e.g. for notebook kernels), host (the host's network; outbound TCP only to --allow-tcp ports; UDP is not restricted)."`
	AllowTCP []tcpPort    `name:"allow-tcp" placeholder:"PORT" sep:"," help:"Outbound TCP ports allowed with --net host. PostgreSQL's 5432 can never be allowed."`
}

// apply puts the limits that were given over the profile's values in s.
// The tmpfs sizes of a profile follow a smaller --memory given here (they
// count toward it); sizes given here are checked later, never changed.
func (l *limitFlags) apply(s *jail.Spec) {
	over(&s.Timeout, l.Timeout)
	over(&s.Grace, l.Grace)
	over(&s.Resources.MemoryBytes, l.Memory)
	over(&s.Resources.SwapBytes, l.Swap)
	over(&s.Resources.CPUs, l.CPUs)
	over(&s.Resources.PIDs, l.PIDs)
	over(&s.DiskBytes, l.Disk)
	over(&s.ShmBytes, l.Shm)
	over(&s.Outputs.Entries, l.OutputEntries)
	over(&s.Outputs.Bytes, l.OutputBytes)
	over(&s.Outputs.FileBytes, l.OutputFileBytes)
	over(&s.Outputs.Time, l.OutputTime)
	if disk := s.DiskBytes; l.Disk != nil && disk > 0 {
		// No honest run stores more files than its disk budget holds:
		// the profile's byte budgets follow a smaller --disk.
		for _, b := range []struct {
			dst  *int64
			flag *outputSize
		}{{&s.Outputs.Bytes, l.OutputBytes}, {&s.Outputs.FileBytes, l.OutputFileBytes}} {
			if b.flag == nil && *b.dst > 0 {
				*b.dst = min(*b.dst, disk)
			}
		}
	}
	if mem := s.Resources.MemoryBytes; l.Memory != nil && mem > 0 {
		if l.Disk == nil {
			s.DiskBytes = min(s.DiskBytes, mem)
		}
		if l.Shm == nil {
			s.ShmBytes = min(s.ShmBytes, mem)
		}
	}
	if l.Net != "" {
		s.Net = l.Net
	}
	if len(l.AllowTCP) > 0 {
		s.AllowTCP = make([]uint16, len(l.AllowTCP))
		for i, p := range l.AllowTCP {
			s.AllowTCP[i] = uint16(p)
		}
	}
}
