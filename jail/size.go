package jail

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize reads a byte size: a number with an optional binary unit, K, M,
// G or T (also written KiB/KB, ...: all are powers of 1024), e.g. 512M,
// 1.5G, 65536. "0" means no limit where a limit is asked for.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size; give e.g. 512M or 2G")
	}
	num := strings.TrimRight(t, "KMGTiBkmgtb")
	unit := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(t[len(num):], "B"), "b"))
	unit = strings.TrimSuffix(unit, "I")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q; use K, M, G or T (powers of 1024)", s, t[len(num):])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("size %q is not a non-negative number with an optional unit (512M, 2G)", s)
	}
	b := v * float64(uint64(1)<<sh)
	if b > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(b), nil
}

// FormatSize writes n the way ParseSize reads it, exactly when possible.
func FormatSize(n int64) string {
	for _, u := range []struct {
		s     string
		shift uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.s)
		}
	}
	return strconv.FormatInt(n, 10)
}
