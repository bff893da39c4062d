package cgroupfs

import (
	"fmt"
	"strconv"
	"strings"
)

// SetLimits writes limits over the ones the leaf was made with, for a
// leaf made before its run's limits were known (a slot of scidex-jail
// serve, made with its profile's): the same files as Create, with Written
// what they hold now. The leaf must have been made with a limit on every
// controller limits names (Controllers), since a v1 leaf has a directory
// only in the hierarchies it was made for.
func (l *Leaf) SetLimits(lim Limits) error {
	if err := lim.validate(); err != nil {
		return err
	}
	settings := Settings(l.version, lim)
	if l.version == 1 {
		settings = memswFirstWhenRaising(settings, l.written)
	}
	for _, s := range settings {
		if _, ok := l.role[s.Controller]; !ok && l.version == 1 {
			return fmt.Errorf("cgroupfs: set limits: the leaf has no %s controller", s.Controller)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	dir := func(ctl string) string { return l.role[ctl] }
	if l.version == 2 {
		dir = func(string) string { return l.dirs[0] }
	}
	return l.apply(settings, dir)
}

// memswFirstWhenRaising puts v1's memory.memsw.limit_in_bytes before
// memory.limit_in_bytes when the RAM+swap limit goes up: the kernel
// refuses a RAM limit above the RAM+swap one at every moment.
func memswFirstWhenRaising(settings []Setting, written map[string]string) []Setting {
	var mem, memsw = -1, -1
	for i, s := range settings {
		switch s.File {
		case "memory.limit_in_bytes":
			mem = i
		case "memory.memsw.limit_in_bytes":
			memsw = i
		}
	}
	if mem < 0 || memsw < 0 {
		return settings
	}
	var old int64
	for file, v := range written {
		if strings.HasSuffix(file, "/"+settings[memsw].File) {
			old, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if now, _ := strconv.ParseInt(settings[memsw].Value, 10, 64); now > old {
		out := append([]Setting(nil), settings...)
		out[mem], out[memsw] = out[memsw], out[mem]
		return out
	}
	return settings
}

// Since is the usage from base on: the counters less base's (CPU time,
// periods, limit hits, OOM kills); the peak is as read, since no counter
// gives the peak of a span.
func (u Usage) Since(base Usage) Usage {
	u.OOMKills -= base.OOMKills
	u.MemoryLimitHits -= base.MemoryLimitHits
	u.PIDsLimitHits -= base.PIDsLimitHits
	u.CPUUsageUsec -= base.CPUUsageUsec
	u.CPUUserUsec -= base.CPUUserUsec
	u.CPUSystemUsec -= base.CPUSystemUsec
	u.NrPeriods -= base.NrPeriods
	u.NrThrottled -= base.NrThrottled
	u.ThrottledUsec -= base.ThrottledUsec
	return u
}
