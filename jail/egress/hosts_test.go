package egress

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHostsKept: a hosts file's parse is kept while its stamp stays and
// is settled; an edit in place, a file renamed over it, and a file whose
// times are not yet settled are read again; a file gone is none.
func TestHostsKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hosts")
	write := func(p, addr string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(addr+" lab.example\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	later := func() time.Time { return time.Now().Add(time.Hour) } // every stamp settled
	k := hostsFile{now: later}
	steps := []struct {
		name   string
		change func()
		now    func() time.Time
		want   string // lab.example's address; "": none
		parsed int
	}{
		{"first", func() { write(path, "10.0.0.1") }, later, "10.0.0.1", 1},
		{"the same stamp: kept", nil, later, "10.0.0.1", 1},
		{"edited in place", func() { write(path, "10.0.0.22") }, later, "10.0.0.22", 2},
		{"edited, again: kept", nil, later, "10.0.0.22", 2},
		{"replaced by a rename", func() { write(path+".new", "10.0.0.3"); os.Rename(path+".new", path) }, later, "10.0.0.3", 3},
		{"not settled: read", func() { write(path, "10.0.0.4") }, time.Now, "10.0.0.4", 4},
		{"not settled, again: read again", nil, time.Now, "10.0.0.4", 5},
		{"settled now", nil, later, "10.0.0.4", 6},
		{"settled, again: kept", nil, later, "10.0.0.4", 6},
		{"removed", func() { os.Remove(path) }, later, "", 6},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		k.now = s.now
		got := k.read(path)["lab.example"]
		var want []netip.Addr
		if s.want != "" {
			want = []netip.Addr{netip.MustParseAddr(s.want)}
		}
		if len(got) != len(want) || len(got) == 1 && got[0] != want[0] {
			t.Errorf("%s: lab.example = %v, want %v", s.name, got, want)
		}
		if k.parsed != s.parsed {
			t.Errorf("%s: parsed %d times, want %d", s.name, k.parsed, s.parsed)
		}
	}
}

// BenchmarkReadHosts is the host's /etc/hosts as a run with no network
// starts its Names.
func BenchmarkReadHosts(b *testing.B) {
	for b.Loop() {
		readHosts("/etc/hosts")
	}
}
