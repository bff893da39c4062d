package jail

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseCPUs(t *testing.T) {
	cases := []struct {
		in      string
		want    float64
		errText string
	}{
		{"2", 2, ""}, {"0.5", 0.5, ""}, {" 1.5 ", 1.5, ""}, {"none", 0, ""}, {"0.01", 0.01, ""}, {"4096", 4096, ""},
		{"0", 0, "0 CPUs is refused"}, {"0.0", 0, "0 CPUs is refused"},
		{"NaN", 0, "not a number of CPUs"}, {"Inf", 0, "not a number of CPUs"}, {"-Inf", 0, "not a number of CPUs"},
		{"infinity", 0, "not a number of CPUs"}, {"0x1p1", 0, "not a number of CPUs"}, {"1_0", 0, "not a number of CPUs"},
		{"-1", 0, "negative"}, {"0.001", 0, "below the kernel's smallest quota"}, {"5000", 0, "above 4096"},
		{"1e400", 0, "not a number of CPUs"}, {"", 0, "not a number of CPUs"}, {"two", 0, "not a number of CPUs"},
	}
	for _, c := range cases {
		got, err := ParseCPUs(c.in)
		if c.errText != "" {
			if err == nil || !strings.Contains(err.Error(), c.errText) {
				t.Errorf("ParseCPUs(%q) = %v, %v, want an error holding %q", c.in, got, err, c.errText)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseCPUs(%q) = %v, %v, want %v, nil", c.in, got, err, c.want)
		}
	}
}

func TestParsePIDs(t *testing.T) {
	cases := []struct {
		in      string
		want    int64
		errText string
	}{
		{"512", 512, ""}, {"16", 16, ""}, {"none", 0, ""}, {"4194304", 4194304, ""},
		{"0", 0, "0 processes is refused"}, {"00", 0, "0 processes is refused"},
		{"99999999999", 0, "above the kernel's limit of 4194304"}, {"4194305", 0, "above the kernel's limit"},
		{"99999999999999999999999", 0, "above the kernel's limit"},
		{"-1", 0, "negative"}, {"15", 0, "below 16"}, {"1.5", 0, "not a whole number"}, {"", 0, "not a whole number"},
		{"lots", 0, "not a whole number"},
	}
	for _, c := range cases {
		got, err := ParsePIDs(c.in)
		if c.errText != "" {
			if err == nil || !strings.Contains(err.Error(), c.errText) {
				t.Errorf("ParsePIDs(%q) = %v, %v, want an error holding %q", c.in, got, err, c.errText)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParsePIDs(%q) = %v, %v, want %v, nil", c.in, got, err, c.want)
		}
	}
}

func TestParseTimeoutAndSizeLimit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{{"none", 0, true}, {"0", 0, true}, {"90s", 90 * time.Second, true}, {"-1s", 0, false}, {"soon", 0, false}} {
		got, err := ParseTimeout(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseTimeout(%q) = %v, %v, want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{{"none", 0, true}, {"0", 0, true}, {"2G", 2 << 30, true}, {"nothing", 0, false}} {
		got, err := ParseSizeLimit(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseSizeLimit(%q) = %v, %v, want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

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
	}
	for _, c := range cases {
		err := c.spec.validateResources()
		if c.errText == "" {
			if err != nil {
				t.Errorf("%s: validateResources() = %v, want nil", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.errText) || !errors.Is(err, ErrBadSpec) {
			t.Errorf("%s: validateResources() = %v, want ErrBadSpec holding %q", c.name, err, c.errText)
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

// TestReadProfilesFile: the profiles file is opened without blocking,
// checked to be a regular file on the open fd and read with a bound.
func TestReadProfilesFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, MaxProfilesFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte(`{"profiles": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path    string
		errText string
	}{
		{ok, ""},
		{fifo, "is a FIFO, not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{dir, "is a directory, not a regular file"},
		{big, "more than the 1048576 a profiles file may have"},
		{filepath.Join(dir, "missing"), "no such file"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := readProfilesFile(c.path); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("readProfilesFile(%s) still blocked after 10 s", c.path)
		}
		if c.errText == "" {
			if err != nil {
				t.Errorf("readProfilesFile(%s) = %v, want nil", c.path, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.errText) {
			t.Errorf("readProfilesFile(%s) = %v, want an error holding %q", c.path, err, c.errText)
		}
	}
}
