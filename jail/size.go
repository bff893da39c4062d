package jail

import "github.com/scidex/scidex-jail/jail/limits"

// ParseSize reads a byte size (512M, 1.5G, 65536): limits.ParseSize, for
// callers that read a size that is not one of the table's limits.
func ParseSize(s string) (int64, error) { return limits.ParseSize(s) }

// FormatSize writes n the way ParseSize reads it: limits.FormatSize.
func FormatSize(n int64) string { return limits.FormatSize(n) }

// maxSize is the largest size ParseSize accepts.
const maxSize = limits.MaxSize
