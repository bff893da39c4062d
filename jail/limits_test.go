package jail

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/option"
)

// TestValidateResources: tmpfs sizes are bounded by the memory they take.
func TestValidateResources(t *testing.T) {
	machine := machineMemory()
	if machine <= 0 {
		t.Fatalf("machineMemory() = %d, want the machine's RAM from sysinfo", machine)
	}
	cases := []struct {
		name    string
		spec    Spec
		errText string
	}{
		{"defaults", Spec{Limits: limits.Of(L{limits.Disk: 1 << 30, limits.Shm: 256 << 20, limits.Memory: 2 << 30, limits.PIDs: 512, limits.CPUQuota: 2})}, ""},
		{"disk equal to memory", Spec{Limits: limits.Of(L{limits.Disk: 2 << 30, limits.Shm: 64 << 20, limits.Memory: 2 << 30})}, ""},
		{"disk above memory", Spec{Limits: limits.Of(L{limits.Disk: 1 << 40, limits.Shm: 64 << 20, limits.Memory: 2 << 30})}, "--disk 1T is larger than the run's memory limit (--memory 2G)"},
		{"shm above memory", Spec{Limits: limits.Of(L{limits.Shm: 1 << 40, limits.Memory: 2 << 30})}, "--shm 1T is larger than the run's memory limit"},
		{"disk above the machine", Spec{Limits: limits.Of(L{limits.Disk: machine + 1<<20, limits.Shm: 64 << 20})}, "larger than this machine's memory"},
		{"shm above the machine", Spec{Limits: limits.Of(L{limits.Shm: machine + 1<<20})}, "--shm"},
		{"shm zero", Spec{}, "--shm 0"},
		{"cpus NaN from a library caller", Spec{Limits: limits.Of(L{limits.Shm: 1 << 20, limits.CPUQuota: nan()})}, "--cpus"},
		{"pids too many", Spec{Limits: limits.Of(L{limits.Shm: 1 << 20, limits.PIDs: 99999999999})}, "--pids 99999999999 is above"},
		{"disk above memory, both from a profile", Spec{Limits: limits.Of(L{limits.Disk: 4 << 30, limits.Shm: 64 << 20, limits.Memory: 2 << 30}), From: option.FromProfile("big", option.Flag)},
			"profiles.big.disk 4G is larger than the run's memory limit (profiles.big.memory 2G)"},
		{"disk from a profile above --memory", Spec{Limits: limits.Of(L{limits.Disk: 4 << 30, limits.Shm: 64 << 20, limits.Memory: 2 << 30}), From: option.FromProfile("big", option.Flag).With(limits.Memory)},
			"profiles.big.disk 4G is larger than the run's memory limit (--memory 2G)"},
		{"timeout negative from a program", Spec{Limits: limits.Of(L{limits.Shm: 1 << 20, limits.Timeout: -time.Second})}, "--timeout -1s is negative"},
		{"entries above from a profile", Spec{Limits: limits.Of(L{limits.Shm: 1 << 20, limits.OutputEntries: 1 << 21}), From: option.FromProfile("x", option.Flag)}, "profiles.x.output_entries 2097152 is above 1048576"},
	}
	for _, c := range cases {
		err := c.spec.validateLimits()
		if c.errText == "" {
			if err != nil {
				t.Errorf("%s: validateLimits() = %v, want nil", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.errText) || !errors.Is(err, ErrBadSpec) {
			t.Errorf("%s: validateLimits() = %v, want ErrBadSpec holding %q", c.name, err, c.errText)
		}
	}
}

// L is a value per row, for limits.Of.
type L = map[*limits.Limit]any

func nan() float64 { var z float64; return z / z }

func TestOffLimits(t *testing.T) {
	// Every row on (1), then some switched off: a row added to the table
	// is on, and changes nothing here.
	var v limits.Values
	for _, l := range limits.All {
		v.Set(l, limits.Of(L{l: 1}).Get(l))
	}
	for _, l := range []*limits.Limit{limits.Timeout, limits.CPUQuota, limits.Disk} {
		v.Set(l, limits.Amount{})
	}
	if got, want := strings.Join(v.Off(), ","), "timeout,cpus,disk"; got != want {
		t.Errorf("Off() = %s, want %s", got, want)
	}
	for _, l := range []*limits.Limit{limits.OutputEntries, limits.OutputFileBytes, limits.OutputTime, limits.Grace, limits.Swap, limits.Shm} {
		v.Set(l, limits.Amount{})
	}
	if got, want := strings.Join(v.Off(), ","), "timeout,cpus,disk,output_entries,output_file_bytes,output_time"; got != want {
		t.Errorf("Off() = %s, want %s (grace, swap and shm are never off)", got, want)
	}
}

// TestMinCPUsIsTheKernels: the table's smallest quota is the one the
// cgroup writer takes (the table cannot import cgroupfs: cmd reads it).
func TestMinCPUsIsTheKernels(t *testing.T) {
	if limits.MinCPUs != cgroupfs.MinCPUs {
		t.Errorf("limits.MinCPUs = %g, want cgroupfs.MinCPUs %g", limits.MinCPUs, cgroupfs.MinCPUs)
	}
}

// TestCgroupKeys: every row that names a key of cgroupfs.Limits names one
// a controller file declares, and every key is some row's.
func TestCgroupKeys(t *testing.T) {
	var named []string
	for _, l := range limits.All {
		if l.Cgroup != "" {
			named = append(named, l.Cgroup)
		}
	}
	if keys := cgroupfs.Keys(); !slices.Equal(named, keys) {
		t.Errorf("the rows' cgroup keys = %q, want cgroupfs.Keys() %q", named, keys)
	}
}
