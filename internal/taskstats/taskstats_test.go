package taskstats

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestElapsedChild: the kernel's age of a child lies between the time
// since just after its start (read before the query) and the time since
// just before it (read after), so a
// wrong field, unit or pid cannot pass. Needs CAP_NET_ADMIN (root).
func TestElapsedChild(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("taskstats needs CAP_NET_ADMIN: run the tests as root (make test does)")
	}
	before := time.Now()
	cmd := exec.Command("/bin/sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	time.Sleep(30 * time.Millisecond)
	lo := time.Since(after)
	d, err := Elapsed(cmd.Process.Pid)
	hi := time.Since(before)
	if err != nil {
		t.Fatalf("Elapsed(child) = %v", err)
	}
	// ac_etime is in whole microseconds, truncated.
	if d < lo-time.Microsecond || d > hi {
		t.Errorf("Elapsed(child) = %v, want between %v and %v", d, lo, hi)
	}
}

// TestCreated: the moment a child was created lies between the clock
// readings around its start (less the halfway rounding, 100 µs at most
// here), 30 ms before the query: not the query's own moment.
func TestCreated(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("taskstats needs CAP_NET_ADMIN: run the tests as root (make test does)")
	}
	for range 20 {
		before := time.Now()
		cmd := exec.Command("/bin/sleep", "10")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		time.Sleep(30 * time.Millisecond)
		got, err := Created(cmd.Process.Pid)
		cmd.Process.Kill()
		cmd.Wait()
		if err != nil {
			t.Fatalf("Created(child) = %v", err)
		}
		if got.Before(before.Add(-100*time.Microsecond)) || got.After(after) {
			t.Fatalf("Created(child) = %v after the start began, want between -100µs and %v (its start returned)", got.Sub(before), after.Sub(before))
		}
	}
}

// TestElapsedNoProcess: a pid that does not exist is the kernel's ESRCH.
func TestElapsedNoProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("taskstats needs CAP_NET_ADMIN: run the tests as root (make test does)")
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	// Reaped: its pid is free (and not reused this soon by a machine
	// that hands out pids in order).
	if _, err := Elapsed(cmd.Process.Pid); !errors.Is(err, unix.ESRCH) {
		t.Errorf("Elapsed(reaped pid) = %v, want ESRCH", err)
	}
}

func attr(typ uint16, payload []byte) []byte { return appendAttr(nil, typ, payload) }

func TestParseElapsed(t *testing.T) {
	stats := make([]byte, 328) // struct taskstats, version 14
	binary.NativeEndian.PutUint64(stats[etimeOffset:], 1234)
	pid := binary.NativeEndian.AppendUint32(nil, 42)
	good := attr(typeAggrPID|unix.NLA_F_NESTED, append(attr(1, pid), attr(typeStats, stats)...))
	for _, c := range []struct {
		name  string
		in    []byte
		want  time.Duration
		error bool
	}{
		{"answer", good, 1234 * time.Microsecond, false},
		{"empty", nil, 0, true},
		{"no stats", attr(typeAggrPID, attr(1, pid)), 0, true},
		{"short stats", attr(typeAggrPID, attr(typeStats, stats[:etimeOffset+4])), 0, true},
		{"length past the end", good[:len(good)-8], 0, true},
		{"stats not nested", attr(typeStats, stats), 0, true},
	} {
		got, err := ParseElapsed(c.in)
		if (err != nil) != c.error || got != c.want {
			t.Errorf("%s: ParseElapsed = %v, %v; want %v, error %v", c.name, got, err, c.want, c.error)
		}
	}
}

func TestAnswer(t *testing.T) {
	msg := func(typ uint16, body []byte) []byte {
		b := make([]byte, unix.SizeofNlMsghdr, 64)
		binary.NativeEndian.PutUint16(b[4:], typ)
		b = append(b, body...)
		binary.NativeEndian.PutUint32(b, uint32(len(b)))
		return b
	}
	errno := func(e int32) []byte { return binary.NativeEndian.AppendUint32(nil, uint32(e)) }
	if _, err := answer(msg(unix.NLMSG_ERROR, errno(-int32(unix.EPERM)))); !errors.Is(err, unix.EPERM) {
		t.Errorf("answer(EPERM) = %v, want EPERM", err)
	}
	if a, err := answer(msg(0x17, []byte{1, 1, 0, 0, 4, 0, 1, 0})); err != nil || len(a) != 4 {
		t.Errorf("answer(one empty attribute) = %v, %v; want 4 bytes", a, err)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, msg(0x17, nil), msg(unix.NLMSG_ERROR, nil)} {
		if _, err := answer(bad); err == nil {
			t.Errorf("answer(%v) = nil error, want one", bad)
		}
	}
}

// FuzzParse: whatever the kernel (or a corrupted buffer) hands over, the
// parsers return and never read past it.
func FuzzParse(f *testing.F) {
	stats := make([]byte, 328)
	f.Add(attr(typeAggrPID, attr(typeStats, stats)))
	f.Add([]byte{4, 0, 4, 0})
	f.Add([]byte{0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseElapsed(b)
		answer(b)
		if a := Attr(b, typeStats); len(a) > len(b) {
			t.Fatalf("Attr returned %d bytes of %d", len(a), len(b))
		}
	})
}
