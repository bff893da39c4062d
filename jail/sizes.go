package jail

import "github.com/scidex/scidex-jail/jail/limits"

// ParseSize reads a byte size (limits.ParseSize).
func ParseSize(s string) (int64, error) { return limits.ParseSize(s) }

// FormatSize writes a size the way ParseSize reads it (limits.FormatSize).
func FormatSize(n int64) string { return limits.FormatSize(n) }

// sizeString prints a limit for a sentence (limits.SizeWords).
func sizeString(n int64) string { return limits.SizeWords(n) }

// maxSize is the largest size ParseSize accepts (limits.MaxSize).
const maxSize = limits.MaxSize
