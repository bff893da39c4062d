package jail

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/limits"
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
		{"defaults", Spec{DiskBytes: 1 << 30, ShmBytes: 256 << 20, Resources: Resources{MemoryBytes: 2 << 30, PIDs: 512, CPUs: 2}}, ""},
		{"disk equal to memory", Spec{DiskBytes: 2 << 30, ShmBytes: 64 << 20, Resources: Resources{MemoryBytes: 2 << 30}}, ""},
		{"disk above memory", Spec{DiskBytes: 1 << 40, ShmBytes: 64 << 20, Resources: Resources{MemoryBytes: 2 << 30}}, "--disk 1T is larger than the run's memory limit (--memory 2G)"},
		{"shm above memory", Spec{ShmBytes: 1 << 40, Resources: Resources{MemoryBytes: 2 << 30}}, "--shm 1T is larger than the run's memory limit"},
		{"disk above the machine", Spec{DiskBytes: machine + 1<<20, ShmBytes: 64 << 20}, "larger than this machine's memory"},
		{"shm above the machine", Spec{ShmBytes: machine + 1<<20}, "--shm"},
		{"shm zero", Spec{ShmBytes: 0}, "--shm 0"},
		{"cpus NaN from a library caller", Spec{ShmBytes: 1 << 20, Resources: Resources{CPUs: nan()}}, "--cpus"},
		{"pids too many", Spec{ShmBytes: 1 << 20, Resources: Resources{PIDs: 99999999999}}, "--pids 99999999999 is above"},
		{"disk above memory, both from a profile", Spec{DiskBytes: 4 << 30, ShmBytes: 64 << 20, Resources: Resources{MemoryBytes: 2 << 30}, LimitsFrom: limits.FromProfile("big")},
			"profiles.big.disk 4G is larger than the run's memory limit (profiles.big.memory 2G)"},
		{"disk from a profile above --memory", Spec{DiskBytes: 4 << 30, ShmBytes: 64 << 20, Resources: Resources{MemoryBytes: 2 << 30}, LimitsFrom: limits.FromProfile("big").WithFlag(limits.Memory)},
			"profiles.big.disk 4G is larger than the run's memory limit (--memory 2G)"},
		{"timeout negative from a program", Spec{ShmBytes: 1 << 20, Timeout: -time.Second}, "--timeout -1s is negative"},
		{"entries above from a profile", Spec{ShmBytes: 1 << 20, Outputs: OutputBudget{Entries: 1 << 21}, LimitsFrom: limits.FromProfile("x")}, "profiles.x.output_entries 2097152 is above 1048576"},
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

func nan() float64 { var z float64; return z / z }

func TestOffLimits(t *testing.T) {
	s := Spec{Timeout: 0, DiskBytes: 0, Resources: Resources{MemoryBytes: 1 << 30, CPUs: 0, PIDs: 64},
		Outputs: OutputBudget{Entries: 1, Bytes: 1, FileBytes: 1, Time: 1}}
	if got, want := strings.Join(s.offLimits(), ","), "timeout,cpus,disk"; got != want {
		t.Errorf("offLimits() = %s, want %s", got, want)
	}
	s.Outputs = OutputBudget{Bytes: 1}
	if got, want := strings.Join(s.offLimits(), ","), "timeout,cpus,disk,output_entries,output_file_bytes,output_time"; got != want {
		t.Errorf("offLimits() = %s, want %s", got, want)
	}
}

// TestMinCPUsIsTheKernels: the table's smallest quota is the one the
// cgroup writer takes (the table cannot import cgroupfs: cmd reads it).
func TestMinCPUsIsTheKernels(t *testing.T) {
	if limits.MinCPUs != cgroupfs.MinCPUs {
		t.Errorf("limits.MinCPUs = %g, want cgroupfs.MinCPUs %g", limits.MinCPUs, cgroupfs.MinCPUs)
	}
}
