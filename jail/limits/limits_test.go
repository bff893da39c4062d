package limits

import (
	"strings"
	"testing"
	"time"
)

// TestParse: each kind, each zero rule, none, the bounds, read by one
// parser driven by the row.
func TestParse(t *testing.T) {
	cases := []struct {
		name string
		l    *Limit
		in   string
		want Amount
		err  string // a part of the message; "" = accepted
	}{
		{"timeout none", Timeout, "none", Amount{}, ""},
		{"timeout 0 is none", Timeout, "0", Amount{}, ""},
		{"timeout", Timeout, " 90s ", Int(90 * time.Second), ""},
		{"timeout negative", Timeout, "-1s", Amount{}, "-1s is negative: give a duration such as 90s or 30m, or none for no timeout"},
		{"timeout unreadable", Timeout, "soon", Amount{}, `"soon" is not a duration`},
		{"grace 0 is an amount", Grace, "0", Amount{}, ""},
		{"grace none", Grace, "none", Amount{}, `"none": give a duration such as 5s or 500ms (0 = SIGKILL at once)`},
		{"grace negative", Grace, "-1s", Amount{}, `"-1s": give a duration`},
		{"memory", Memory, "2G", Int(int64(2 << 30)), ""},
		{"memory 0 is none", Memory, "0", Amount{}, ""},
		{"memory below", Memory, "1M", Amount{}, "1M is below 8M: not even the jail's init fits"},
		{"memory unit", Memory, "1X", Amount{}, `size "1X": unknown unit "X"`},
		{"swap none", Swap, "none", Amount{}, `size "none" is not a non-negative number`},
		{"swap 0", Swap, "0", Amount{}, ""},
		{"cpus", CPUQuota, "0.5", Float(0.5), ""},
		{"cpus none", CPUQuota, "none", Amount{}, ""},
		{"cpus 0", CPUQuota, "0", Amount{}, "0 CPUs is refused: give a quota such as 0.5 or 2, or write none for no quota"},
		{"cpus NaN", CPUQuota, "NaN", Amount{}, `"NaN" is not a number of CPUs: give a decimal number such as 0.5 or 2, or none for no quota`},
		{"cpus hex", CPUQuota, "0x1p1", Amount{}, "not a number of CPUs"},
		{"cpus negative", CPUQuota, "-1", Amount{}, "-1 CPUs is negative"},
		{"cpus below", CPUQuota, "0.001", Amount{}, "0.001 CPUs is below the kernel's smallest quota of 0.01"},
		{"cpus above", CPUQuota, "5000", Amount{}, "5000 CPUs is above 4096"},
		{"pids", PIDs, "512", Int(int64(512)), ""},
		{"pids 0", PIDs, "00", Amount{}, "0 processes is refused: give a limit such as 512, or write none for no limit"},
		{"pids below", PIDs, "15", Amount{}, "15 is below 16"},
		{"pids above", PIDs, "4194305", Amount{}, "4194305 is above the kernel's limit of 4194304 processes"},
		{"pids out of int64", PIDs, "99999999999999999999999", Amount{}, "is above the kernel's limit"},
		{"pids fraction", PIDs, "1.5", Amount{}, `"1.5" is not a whole number`},
		{"disk below", Disk, "1K", Amount{}, "1K is below 64K"},
		{"shm 0 is left to Check", Shm, "0", Amount{}, ""},
		{"entries 0", OutputEntries, "0", Amount{}, "0 entries is refused: give a budget such as 10000, or write none for no budget"},
		{"entries above", OutputEntries, "1048577", Amount{}, "1048577 is above 1048576"},
		{"output bytes 0", OutputBytes, "0", Amount{}, "0 bytes is refused"},
		{"output time 0s", OutputTime, "0s", Amount{}, "0s: give a positive duration such as 3m, or write none for no budget"},
		{"output time", OutputTime, "3m", Int(3 * time.Minute), ""},
	}
	for _, c := range cases {
		got, err := c.l.Parse(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: %s.Parse(%q) = %v, %v, want %v, nil", c.name, c.l.Name, c.in, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %s.Parse(%q) = %v, %v, want an error holding %q", c.name, c.l.Name, c.in, got, err, c.err)
		}
	}
}

// TestCheck: a typed value follows the same rule; 0 is off where none is
// allowed, refused where it is not.
func TestCheck(t *testing.T) {
	cases := []struct {
		l   *Limit
		a   Amount
		err string
	}{
		{PIDs, Amount{}, ""}, {CPUQuota, Amount{}, ""}, {Grace, Amount{}, ""},
		{Shm, Amount{}, "0 bytes is refused"},
		{PIDs, Int(int64(99999999999)), "99999999999 is above the kernel's limit of 4194304 processes"},
		{CPUQuota, Float(nan()), "is not a number of CPUs"},
		{Timeout, Int(-time.Second), "-1s is negative"},
		{Memory, Int(int64(1 << 20)), "1M is below 8M"},
		{Memory, Int(int64(1 << 30)), ""},
	}
	for _, c := range cases {
		err := c.l.Check(c.a)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s.Check(%v) = %v, want %q", c.l.Name, c.a, err, c.err)
		}
	}
}

func nan() float64 { var z float64; return z / z }

// TestFormatParses: what Format writes, Parse reads back to the same value.
func TestFormatParses(t *testing.T) {
	for _, c := range []struct {
		l *Limit
		a Amount
	}{{Timeout, Amount{}}, {Timeout, Int(90 * time.Second)}, {Memory, Int(int64(3 << 29))}, {CPUQuota, Float(0.25)},
		{PIDs, Amount{}}, {PIDs, Int(int64(512))}, {Grace, Amount{}}, {OutputTime, Int(3 * time.Minute)}} {
		s := c.l.Format(c.a)
		got, err := c.l.Parse(s)
		if err != nil || got != c.a {
			t.Errorf("%s.Parse(Format(%v) = %q) = %v, %v, want %v", c.l.Name, c.a, s, got, err, c.a)
		}
	}
}

// TestTable: the names a user types are unique, and every row says what
// its messages need.
func TestTable(t *testing.T) {
	seen := map[string]string{}
	for _, l := range All {
		for _, n := range []string{"name " + l.Name, "flag " + l.Flag, "field " + l.Field, "report " + l.Report} {
			if other, ok := seen[n]; ok {
				t.Errorf("%s: %s is %s's too", l.Name, n, other)
			}
			seen[n] = l.Name
		}
		if l.Give == "" || l.Help == "" || l.Noun == "" || l.Doc.Value == "" {
			t.Errorf("%s: Give, Help, Noun and Doc.Value must be set", l.Name)
		}
		if l.None && l.Off == "" || l.Zero == ZeroRefused && !l.None && l.ZeroWhy == "" {
			t.Errorf("%s: a row with none needs Off, one refusing 0 without none ZeroWhy", l.Name)
		}
		if ByName(l.Name) != l || ByFlag(l.Flag) != l {
			t.Errorf("ByName/ByFlag(%s) do not find the row", l.Name)
		}
	}
}

// TestSchemaMessages: the schema's messages, with the text put in, are
// Parse's own.
func TestSchemaMessages(t *testing.T) {
	for _, c := range []struct {
		l    *Limit
		key  string
		text string
	}{{CPUQuota, "zero", "0"}, {PIDs, "zero", "0"}, {PIDs, "below", "3"}, {CPUQuota, "above", "5000"},
		{Timeout, "negative", "-1s"}, {Grace, "negative", "-1s"}, {OutputTime, "zero", "0"},
		{PIDs, "unreadable", "lots"}} {
		var msg string
		for _, s := range Schema() {
			if s.Name == c.l.Name {
				msg = s.Messages[c.key]
			}
		}
		_, err := c.l.Parse(c.text)
		got := strings.ReplaceAll(msg, Placeholder, c.text)
		if err == nil || got != "--"+c.l.Flag+": "+err.Error() {
			t.Errorf("schema %s.%s with %q = %q, want --%s: %v", c.l.Name, c.key, c.text, got, c.l.Flag, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "none", "1.5", "2G", "90s", "-1", "1e400", "0x1p1", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range All {
			a, err := l.Parse(s)
			if err == nil && !(a.IsZero() && l.Zero == ZeroRefused && !l.None) { // shm 0: Check's
				if cerr := l.Check(a); cerr != nil {
					t.Errorf("%s.Parse(%q) = %v, accepted, but Check says %v", l.Name, s, a, cerr)
				}
			}
		}
	})
}
