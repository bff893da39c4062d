package seccomp

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/seccomp/internal/rules"
)

// generatedDigests reads the sha256 of each program from bpf/generated.txt.
func generatedDigests(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("bpf/generated.txt")
	if err != nil {
		t.Fatalf("open generated summary: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for _, fl := range fields {
			if d, ok := strings.CutPrefix(fl, "sha256="); ok {
				sums[fields[0]] = d
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read generated summary: %v", err)
	}
	return sums
}

func TestLookup(t *testing.T) {
	sums := generatedDigests(t)
	for _, arch := range rules.Arches {
		for _, p := range policies() {
			prog, err := lookup(p, arch)
			if err != nil {
				t.Errorf("lookup(%v, %s) = %v, want nil", p, arch, err)
				continue
			}
			if prog.Policy != p || prog.Arch != arch || len(prog.Filter) == 0 {
				t.Errorf("lookup(%v, %s) = {%v %s %d instructions}, want {%v %s >0}", p, arch, prog.Policy, prog.Arch, len(prog.Filter), p, arch)
			}
			file := rules.FileName(p.Name, string(p.Net), arch)
			if want := sums[file]; prog.SHA256 != want {
				t.Errorf("lookup(%v, %s).SHA256 = %s, want %s (from generated.txt)", p, arch, prog.SHA256, want)
			}
			// The digest is the program's own: generated.txt agrees with
			// the bytes that are loaded.
			raw, err := os.ReadFile("bpf/" + file)
			if sum := sha256.Sum256(raw); err != nil || prog.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("lookup(%v, %s).SHA256 = %s, want the sha256 of bpf/%s, %x (%v)", p, arch, prog.SHA256, file, sum, err)
			}
		}
	}
	p := Policy{Name: "default", Net: NetNone}
	if prog, err := Lookup(p); err != nil || prog.Arch != runtime.GOARCH {
		t.Errorf("Lookup(%v) = {Arch %s}, %v; want {Arch %s}, nil", p, prog.Arch, err, runtime.GOARCH)
	}
}

func TestLookupErrors(t *testing.T) {
	tests := []struct {
		name        string
		p           Policy
		arch        string
		unsupported bool
	}{
		{"unknown name", Policy{Name: "strict", Net: NetNone}, "amd64", false},
		{"empty policy", Policy{}, "amd64", false},
		{"unknown net mode", Policy{Name: "default", Net: "wifi"}, "amd64", false},
		{"net mode in capitals", Policy{Name: "default", Net: "None"}, "amd64", false},
		{"architecture without programs", Policy{Name: "default", Net: NetNone}, "riscv64", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lookup(tt.p, tt.arch)
			if err == nil {
				t.Fatalf("lookup(%v, %s) = nil error, want an error", tt.p, tt.arch)
			}
			if got := errors.Is(err, ErrUnsupported); got != tt.unsupported {
				t.Errorf("errors.Is(lookup(%v, %s), ErrUnsupported) = %v (%v), want %v", tt.p, tt.arch, got, err, tt.unsupported)
			}
		})
	}
}

func TestDenied(t *testing.T) {
	tests := []struct {
		net     Net
		arch    string
		want    []string
		notWant []string
	}{
		{NetNone, "amd64",
			[]string{"mount", "clone3 (libc falls back to clone): ENOSYS", "new namespaces", "io_uring",
				"sockets other than unix: EAFNOSUPPORT", "TIOCSTI", "i386", "x32", "open_tree*", "listns",
				"system calls the table does not name (unassigned numbers, and any newer than it): ENOSYS"},
			[]string{"MPTCP", "arm32"}},
		{NetInet, "amd64",
			[]string{"sockets other than unix, inet, inet6 and netlink route: EAFNOSUPPORT", "MPTCP sockets: EPROTONOSUPPORT", "raw"},
			nil},
		{NetInet, "arm64", []string{"MPTCP", "arm32", "the table does not name"}, []string{"x32"}},
	}
	for _, tt := range tests {
		p := Policy{Name: "default", Net: tt.net}
		prog, err := lookup(p, tt.arch)
		if err != nil {
			t.Fatalf("lookup(%v, %s) = %v", p, tt.arch, err)
		}
		denied := prog.Denied()
		all := strings.Join(denied, "\n")
		for _, w := range tt.want {
			if !strings.Contains(all, w) {
				t.Errorf("%v %s: Denied() = %q, want a line containing %q", p, tt.arch, denied, w)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(all, w) {
				t.Errorf("%v %s: Denied() = %q, want no line containing %q", p, tt.arch, denied, w)
			}
		}
		for _, line := range denied {
			if len(line) > 130 {
				t.Errorf("%v %s: Denied() line %q is %d bytes, want at most 130", p, tt.arch, line, len(line))
			}
		}
	}
}

func TestUnsupportedError(t *testing.T) {
	err := error(&UnsupportedError{Feature: "seccomp(2)", Found: "ENOSYS", Fix: "use Linux >= 3.17"})
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("errors.Is(%v, ErrUnsupported) = false, want true", err)
	}
	for _, part := range []string{"seccomp(2)", "ENOSYS", "Linux >= 3.17"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("UnsupportedError.Error() = %q, want it to contain %q", err, part)
		}
	}
	if errors.Is(errors.New("other"), ErrUnsupported) {
		t.Errorf("errors.Is(other, ErrUnsupported) = true, want false")
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		raw     []byte
		wantN   int
		wantErr bool
	}{
		{"empty", nil, 0, true},
		{"partial instruction", make([]byte, 7), 0, true},
		{"one instruction", []byte{0x06, 0x00, 0x01, 0x02, 0x00, 0x00, 0xff, 0x7f}, 1, false},
		{"at the kernel limit", make([]byte, 8*bpfMaxInsns), bpfMaxInsns, false},
		{"over the kernel limit", make([]byte, 8*(bpfMaxInsns+1)), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decode(tt.raw)
			if (err != nil) != tt.wantErr || len(got) != tt.wantN {
				t.Fatalf("decode(%d bytes) = %d instructions, %v; want %d, error %v", len(tt.raw), len(got), err, tt.wantN, tt.wantErr)
			}
		})
	}
	got, _ := decode([]byte{0x06, 0x00, 0x01, 0x02, 0x00, 0x00, 0xff, 0x7f})
	if f := got[0]; f.Code != 0x06 || f.Jt != 1 || f.Jf != 2 || f.K != 0x7fff0000 {
		t.Errorf("decode(ret ALLOW) = %+v, want {Code:6 Jt:1 Jf:2 K:0x7fff0000}", f)
	}
}
