package limits

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize reads a byte size: a number with an optional binary unit, K, M,
// G or T (also written KiB/KB, ...: all are powers of 1024), e.g. 512M,
// 1.5G, 65536. Whole numbers are exact (not rounded through a float above
// 2^53); a fraction is rounded down to whole bytes, and one that would
// round down to 0 (which means no limit) is an error. Sizes above MaxSize
// are refused, so that two of them still add up without overflow (cgroup
// v1 writes memory+swap).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size; give e.g. 512M or 2G")
	}
	num := strings.TrimRightFunc(t, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
	sh, ok := sizeUnits[strings.ToUpper(t[len(num):])]
	if num == "" {
		return 0, fmt.Errorf("size %q is not a non-negative number with an optional unit (512M, 2G)", s)
	}
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q; use K, M, G or T (powers of 1024)", s, t[len(num):])
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil && n >= 0 && num[0] != '-' {
		if n > MaxSize>>sh {
			return 0, fmt.Errorf("size %q is too large (at most %d bytes)", s, int64(MaxSize))
		}
		return n << sh, nil
	}
	v, err := strconv.ParseFloat(num, 64)
	if errors.Is(err, strconv.ErrRange) && math.IsInf(v, 1) {
		return 0, fmt.Errorf("size %q is too large (at most %d bytes)", s, int64(MaxSize))
	}
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || strings.HasPrefix(num, "-") {
		return 0, fmt.Errorf("size %q is not a non-negative number with an optional unit (512M, 2G)", s)
	}
	b := math.Floor(v * float64(uint64(1)<<sh))
	if b >= MaxSize+1 { // b is whole: MaxSize itself is not a float64
		return 0, fmt.Errorf("size %q is too large (at most %d bytes)", s, int64(MaxSize))
	}
	if b == 0 && v != 0 {
		return 0, fmt.Errorf("size %q is less than one byte; 0 means no limit", s)
	}
	return int64(b), nil
}

// MaxSize is the largest size ParseSize accepts: 4 EiB - 1.
const MaxSize = math.MaxInt64 / 2

// sizeUnits maps a unit, upper-cased, to its power of two.
var sizeUnits = map[string]uint{
	"": 0, "B": 0,
	"K": 10, "KB": 10, "KIB": 10,
	"M": 20, "MB": 20, "MIB": 20,
	"G": 30, "GB": 30, "GIB": 30,
	"T": 40, "TB": 40, "TIB": 40,
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

// SizeWords prints a limit for a sentence: FormatSize's exact form with
// its unit spelled out (2GiB, 65 bytes), or "unlimited".
func SizeWords(n int64) string {
	if n <= 0 {
		return "unlimited"
	}
	f := FormatSize(n)
	if last := f[len(f)-1]; last >= '0' && last <= '9' {
		return f + " bytes"
	}
	return f + "iB"
}
