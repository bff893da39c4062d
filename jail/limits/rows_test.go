package limits

import (
	"strings"
	"testing"
	"time"
)

// The cases of jail's ParseCPUs, ParsePIDs, ParseTimeout and
// ParseSizeLimit, which the rows' Parse replaced.

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
		a, err := CPUQuota.Parse(c.in)
		got := a.Float()
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
		a, err := PIDs.Parse(c.in)
		got := a.Int()
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
		a, err := Timeout.Parse(c.in)
		got := time.Duration(a.Int())
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseTimeout(%q) = %v, %v, want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{{"none", 0, true}, {"0", 0, true}, {"2G", 2 << 30, true}, {"1M", 0, false}, {"nothing", 0, false}} {
		a, err := Memory.Parse(c.in)
		got := a.Int()
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseSizeLimit(%q) = %v, %v, want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
