package supervise

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// TestViewDigest: a view's digest hashes the view and each bound source's
// device and inode (or the stat's error), in the bytes it had when made
// with fmt, so a slot made by an older server of this build's keys and a
// run's key agree; a source replaced at its path is another digest.
func TestViewDigest(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := unix.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  protocol.Config
	}{
		{"system and data", protocol.Config{Mounts: protocol.Mounts{System: []protocol.SystemEntry{{Path: "/usr"}, {Path: "/bin", Symlink: "usr/bin"}, {Path: "/etc"}}, ReadOnly: []string{data}}}},
		{"a missing source", protocol.Config{Mounts: protocol.Mounts{ReadOnly: []string{filepath.Join(dir, "gone")}, ReadWrite: []string{dir}}}},
	}
	for _, c := range cases {
		if got, want := viewDigest(&c.cfg), fmtDigest(&c.cfg); got != want {
			t.Errorf("%s: viewDigest() = %s, want %s", c.name, got, want)
		}
	}
	before := viewDigest(&cases[0].cfg)
	if err := unix.Rename(data, data+".old"); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if after := viewDigest(&cases[0].cfg); after == before {
		t.Errorf("viewDigest() after data/ was replaced = %s, want another than %s", after, before)
	}
}

// fmtDigest is viewDigest as it was written with fmt.Fprintf.
func fmtDigest(c *protocol.Config) string {
	v := protocol.ViewOf(c)
	h := sha256.New()
	h.Write(protocol.EncodeConfig(&v))
	m := &c.Mounts
	sources := append(append([]string{}, m.ReadOnly...), m.ReadWrite...)
	for _, e := range m.System {
		if e.Symlink == "" {
			sources = append(sources, e.Path)
		}
	}
	for _, src := range sources {
		var st unix.Stat_t
		if err := unix.Stat(src, &st); err != nil {
			fmt.Fprintf(h, "%s:%v;", src, err)
			continue
		}
		fmt.Fprintf(h, "%s:%d:%d;", src, st.Dev, st.Ino)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// BenchmarkViewDigest is a run's slot key's view part: the view's
// encoding, a stat of each bound source and their hash.
func BenchmarkViewDigest(b *testing.B) {
	cfg := protocol.Config{Mounts: protocol.Mounts{System: []protocol.SystemEntry{{Path: "/usr"}, {Path: "/bin", Symlink: "usr/bin"}, {Path: "/etc"}, {Path: "/lib", Symlink: "usr/lib"}}, ReadOnly: []string{b.TempDir()}}}
	for b.Loop() {
		viewDigest(&cfg)
	}
}
