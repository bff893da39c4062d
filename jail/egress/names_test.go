package egress

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// TestNames: the name service answers getaddrinfo for the hosts file's
// names as the C library would from the file, refuses and records every
// other name (found 0, HOST_NOT_FOUND), hangs up on what it does not
// answer (the library then reads its own files), and its summary names
// what was refused.
func TestNames(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	os.WriteFile(hosts, []byte("127.0.0.1 localhost # the loopback\n::1 localhost ip6-localhost\n"), 0o644)
	l, err := net.Listen("unix", filepath.Join(dir, "socket"))
	if err != nil {
		t.Fatal(err)
	}
	n := NewNames(0, hosts)
	n.Serve(l)
	ask := func(typ int32, key string) []byte {
		t.Helper()
		c, err := net.Dial("unix", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		k := append([]byte(key), 0)
		var req bytes.Buffer
		binary.Write(&req, binary.NativeEndian, [3]int32{nscdVersion, typ, int32(len(k))})
		req.Write(k)
		c.Write(req.Bytes())
		b, _ := io.ReadAll(c)
		return b
	}
	for _, c := range []struct {
		name string
		typ  int32
		key  string
		want []byte
	}{
		{"hosts file name", nscdGetAI, "localhost", aiFound("localhost", nil)}, // compared below by its header
		{"refused", nscdGetAI, "eutils.ncbi.nlm.nih.gov", aiHeader(0, 0, 0, 0, hostNotFound)},
		{"refused, upper case", nscdGetAI, "EUTILS.ncbi.nlm.nih.gov.", aiHeader(0, 0, 0, 0, hostNotFound)},
		{"gethostbyname refused", nscdGetHostByName, "evil.example", hostHeader(0, 0, 0, 0, 0, 0, hostNotFound)},
		{"gethostbyname of the file", nscdGetHostByName, "localhost", hostFound("localhost", []netip.Addr{netip.MustParseAddr("127.0.0.1")}, true)},
		{"gethostbyname v6 of the file", nscdGetHostByNameV6, "ip6-localhost", hostFound("ip6-localhost", []netip.Addr{netip.IPv6Loopback()}, false)},
		{"the cache's shared memory", 13, "hosts", nil},
		{"a user", 0, "root", nil},
		{"malformed name", nscdGetAI, "a..b", aiHeader(0, 0, 0, 0, hostNotFound)},
	} {
		got := ask(c.typ, c.key)
		if c.name == "hosts file name" {
			if len(got) < 24 || !bytes.Equal(got[:8], aiHeader(1, 2, 20, 10, 0)[:8]) || !bytes.HasSuffix(got, []byte("localhost\x00")) {
				t.Errorf("%s: answer %v, want found, 2 addresses and the name", c.name, got)
			}
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: answer %v, want %v", c.name, got, c.want)
		}
	}
	log := n.Stop()
	if log.Totals.Lookups != 4 || len(log.Lookups) != 3 || log.Lookups[0].Name != "eutils.ncbi.nlm.nih.gov" || log.Lookups[0].Count != 2 ||
		log.Lookups[1].Name != "evil.example" || log.Lookups[1].Type != "gethostbyname" || log.Lookups[2].Reason != ReasonMalformed {
		t.Errorf("log = %+v, want eutils twice, evil.example by gethostbyname, and the malformed name", log)
	}
	if got, want := log.NamesSummary("this profile allows no network"), "The analysis tried to reach eutils.ncbi.nlm.nih.gov, evil.example; this profile allows no network."; got != want {
		t.Errorf("NamesSummary() = %q, want %q", got, want)
	}
}
