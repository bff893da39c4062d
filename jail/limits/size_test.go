package limits

import (
	"strings"
	"testing"
)

// FuzzParseSize: ParseSize never panics, accepts only sizes in range, and
// what it accepts formats back into the same size.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "512M", "1.5G", "65536", "4KiB", "2Q", "-1", "1e3K", "9007199254740993", "0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 || n > MaxSize {
			t.Fatalf("ParseSize(%q) = %d, want 0..%d", s, n, int64(MaxSize))
		}
		back, err := ParseSize(FormatSize(n))
		if err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d) = %q) = %d, %v, want %d, nil", n, FormatSize(n), back, err, n)
		}
	})
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in      string
		want    int64
		errText string
	}{
		{"0", 0, ""},
		{"65536", 65536, ""},
		{"512M", 512 << 20, ""},
		{"2G", 2 << 30, ""},
		{"1.5G", 3 << 29, ""},
		{"1T", 1 << 40, ""},
		{"4k", 4096, ""},
		{"4KiB", 4096, ""},
		{"4KB", 4096, ""},
		{"4kb", 4096, ""},
		{"10B", 10, ""},
		{" 2G ", 2 << 30, ""},
		{"0.5K", 512, ""},
		{"9007199254740993", 9007199254740993, ""}, // 2^53+1: exact, not through a float
		{"4611686018427387903", 1<<62 - 1, ""},
		{"", 0, "empty size"},
		{"2Q", 0, "unknown unit"},
		{"2P", 0, "unknown unit"},
		{"2GG", 0, "unknown unit"},
		{"1i", 0, "unknown unit"},
		{"1ib", 0, "unknown unit"},
		{"G", 0, "not a non-negative number"},
		{"-1", 0, "not a non-negative number"},
		{"-2G", 0, "not a non-negative number"},
		{"abc", 0, "not a non-negative number"},
		{"NaN", 0, "not a non-negative number"},
		{"Inf", 0, "not a non-negative number"},
		{"0.1", 0, "less than one byte"},
		{"8T8", 0, "not a non-negative number"},
		{"9999999T", 0, "too large"},
		{"4611686018427387904", 0, "too large"},
		{"99999999999999999999", 0, "too large"},
	}
	for _, c := range cases {
		got, err := ParseSize(c.in)
		if c.errText != "" {
			if err == nil || !strings.Contains(err.Error(), c.errText) {
				t.Errorf("ParseSize(%q) = %d, %v, want an error holding %q", c.in, got, err, c.errText)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d, nil", c.in, got, err, c.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	cases := []struct {
		in   int64
		want string
	}{
		{0, "0"}, {1, "1"}, {1023, "1023"}, {1024, "1K"}, {1536, "1536"}, {512 << 20, "512M"},
		{2 << 30, "2G"}, {3 << 29, "1536M"}, {1 << 40, "1T"}, {65536, "64K"}, {1<<62 - 1, "4611686018427387903"},
	}
	for _, c := range cases {
		if got := FormatSize(c.in); got != c.want {
			t.Errorf("FormatSize(%d) = %q, want %q", c.in, got, c.want)
		}
		if back, err := ParseSize(FormatSize(c.in)); err != nil || back != c.in {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v, want %d, nil", c.in, back, err, c.in)
		}
	}
}
