package stamp

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSettled: both times must be Racy older than the stat's time; one
// within it, or at its very edge, is not.
func TestSettled(t *testing.T) {
	at := time.Unix(1_000_000, 500)
	ts := func(d time.Duration) unix.Timespec { return unix.NsecToTimespec(at.Add(-d).UnixNano()) }
	tests := []struct {
		name         string
		mtime, ctime time.Duration // before at
		want         bool
	}{
		{"both old", time.Hour, time.Hour, true},
		{"both just older", Racy + time.Nanosecond, Racy + time.Nanosecond, true},
		{"mtime at the edge", Racy, time.Hour, false},
		{"ctime recent", time.Hour, time.Second, false},
		{"mtime recent", time.Millisecond, time.Hour, false},
		{"in the future", -time.Hour, -time.Hour, false},
	}
	for _, tt := range tests {
		if got := Settled(ts(tt.mtime), ts(tt.ctime), at); got != tt.want {
			t.Errorf("%s: Settled = %v, want %v", tt.name, got, tt.want)
		}
	}
}
