package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/promise"
)

// limitFlag is the value of every limit flag: kong finds the flag's row
// in jail/limits' table by the flag's name and reads the value with the
// row's parser, so the command line and the profiles file follow one rule
// (README, "Limits"); a refused value ends the parse with the flag's name
// and the row's message. The flags are pointers: nil is "not given", so
// the profile's value stands, where 0 or none given on the command line
// overrides it.
type limitFlag struct {
	limit  *limits.Limit
	amount limits.Amount
}

func (f *limitFlag) Decode(ctx *kong.DecodeContext) error {
	l := limits.ByFlag(ctx.Value.Name)
	if l == nil {
		return fmt.Errorf("bug: --%s has no row in jail/limits' table", ctx.Value.Name)
	}
	var s string
	if err := ctx.Scan.PopValueInto(l.Noun, &s); err != nil {
		return err
	}
	a, err := l.Parse(s)
	if err != nil {
		return err
	}
	*f = limitFlag{limit: l, amount: a}
	return nil
}

// limitVars are the limit flags' placeholders and help texts, from the
// table, for the ${...} in limitFlags' tags.
func limitVars() kong.Vars {
	v := kong.Vars{}
	for _, l := range limits.All {
		key := strings.ReplaceAll(l.Flag, "-", "_")
		v["placeholder_"+key], v["help_"+key] = l.Placeholder, l.Help
	}
	return v
}

// tcpPort is one port of --allow-tcp: 1-65535.
type tcpPort uint16

func (v *tcpPort) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("port", &s); err != nil {
		return err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("%q: give TCP port numbers 1-65535, comma-separated", s)
	}
	*v = tcpPort(n)
	return nil
}

// limitFlags are run's limits; each left out keeps the profile's value.
type limitFlags struct {
	Timeout *limitFlag `name:"timeout" placeholder:"${placeholder_timeout}" help:"${help_timeout}"`
	Grace   *limitFlag `name:"grace" placeholder:"${placeholder_grace}" help:"${help_grace}"`
	Memory  *limitFlag `name:"memory" placeholder:"${placeholder_memory}" help:"${help_memory}"`
	Swap    *limitFlag `name:"swap" placeholder:"${placeholder_swap}" help:"${help_swap}"`
	CPUs    *limitFlag `name:"cpus" placeholder:"${placeholder_cpus}" help:"${help_cpus}"`
	PIDs    *limitFlag `name:"pids" placeholder:"${placeholder_pids}" help:"${help_pids}"`
	Disk    *limitFlag `name:"disk" placeholder:"${placeholder_disk}" help:"${help_disk}"`
	Shm     *limitFlag `name:"shm" placeholder:"${placeholder_shm}" help:"${help_shm}"`

	OutputEntries   *limitFlag `name:"output-entries" placeholder:"${placeholder_output_entries}" help:"${help_output_entries}"`
	OutputBytes     *limitFlag `name:"output-bytes" placeholder:"${placeholder_output_bytes}" help:"${help_output_bytes}"`
	OutputFileBytes *limitFlag `name:"output-file-bytes" placeholder:"${placeholder_output_file_bytes}" help:"${help_output_file_bytes}"`
	OutputTime      *limitFlag `name:"output-time" placeholder:"${placeholder_output_time}" help:"${help_output_time}"`

	Net      promise.NetMode `name:"net" placeholder:"MODE" help:"Network: none (no network), loopback (lo only, e.g. for notebook kernels), host (the host's network; outbound TCP only to --allow-tcp ports; UDP is not restricted)."`
	AllowTCP []tcpPort       `name:"allow-tcp" placeholder:"PORT" sep:"," help:"Outbound TCP ports allowed with --net host. PostgreSQL's 5432 can never be allowed."`
}

// given are the limit flags that were given.
func (l *limitFlags) given() []*limitFlag {
	var out []*limitFlag
	for _, f := range []*limitFlag{l.Timeout, l.Grace, l.Memory, l.Swap, l.CPUs, l.PIDs, l.Disk, l.Shm,
		l.OutputEntries, l.OutputBytes, l.OutputFileBytes, l.OutputTime} {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// apply puts the limits that were given over the profile's values in s.
// The tmpfs sizes of a profile follow a smaller --memory given here (they
// count toward it); sizes given here are checked later, never changed.
func (l *limitFlags) apply(s *jail.Spec) {
	for _, f := range l.given() {
		s.SetLimit(f.limit, f.amount)
	}
	if disk := s.DiskBytes; l.Disk != nil && disk > 0 {
		// No honest run stores more files than its disk budget holds:
		// the profile's byte budgets follow a smaller --disk.
		for _, b := range []struct {
			dst  *int64
			flag *limitFlag
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
