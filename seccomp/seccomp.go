package seccomp

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/seccomp/internal/rules"
)

//go:generate go run ./internal/gen -out bpf

// programs holds the output of internal/gen. The files are arrays of struct
// sock_filter in little-endian order, which is the host order of both amd64
// and arm64 (libseccomp writes host order, and the generator runs on one of
// them); generated.txt has each one's sha256, written by the generator from
// the same bytes (a test checks they agree). Reading the digest from there
// keeps crypto out of the jail's init, which loads the program and reports
// its digest in every run: crypto/sha256 brings 14 packages to initialise
// and 150 KB of binary.
//
// Each file is a string of its own (programs.go), not an embed.FS: an
// embed.FS brings io/fs's FileInfo and with it time's formatting, 80 KB of
// the init program, paid in every run's resident size.

// Net is what a filter lets a process do on the network: which sockets it
// may make. Which network the process is in is not the filter's business:
// the jail's network modes (jail/netmode) each name one Net and set up the
// namespace themselves.
type Net string

const (
	// NetNone refuses inet, inet6 and netlink sockets.
	NetNone Net = rules.NetNone
	// NetInet allows inet, inet6 and netlink route sockets.
	NetInet Net = rules.NetInet
)

// Policy names a filter: a rule set and a network policy.
type Policy struct {
	Name string // rule set; "default" is the only one
	Net  Net    // which sockets the filter allows
	// Label is the caller's name for the policy's network, shown by String
	// (the report's "default/host": the jail names its network mode, so
	// that two modes with one filter say which ran). "" shows Net. The
	// filter is chosen by Name and Net alone.
	Label string
}

// String returns e.g. "default/none": the rule set and the network's
// label, or its Net when it has none.
func (p Policy) String() string {
	if p.Label != "" {
		return p.Name + "/" + p.Label
	}
	return p.Name + "/" + string(p.Net)
}

// Program is a compiled filter for one architecture, ready to load.
type Program struct {
	Policy Policy
	Arch   string // GOARCH the program was compiled for
	Filter []unix.SockFilter
	SHA256 string // hex digest of the raw program bytes, for the report
}

// Lookup returns the program for p on the running architecture. The error
// is errors.Is(err, ErrUnsupported) when no program was built for this
// architecture; an unknown policy name or network policy is a plain error.
func Lookup(p Policy) (Program, error) {
	return lookup(p, runtime.GOARCH)
}

func lookup(p Policy, arch string) (Program, error) {
	if err := rules.Check(p.Name, string(p.Net)); err != nil {
		return Program{}, wrap.Error("look up seccomp program", err)
	}
	file := "bpf/" + rules.FileName(p.Name, string(p.Net), arch)
	raw, ok := programs[rules.FileName(p.Name, string(p.Net), arch)]
	if !ok {
		return Program{}, &UnsupportedError{
			Feature: "seccomp program for " + arch,
			Found:   "programs are built for " + rules.Quoted(rules.Arches) + " only",
			Fix:     "add the architecture to rules.Arches and run go generate ./seccomp",
		}
	}
	filter, err := decode([]byte(raw))
	if err != nil {
		return Program{}, wrap.Around("decode embedded seccomp program "+file+": ", err, " (bug)")
	}
	sum, err := generatedDigest(rules.FileName(p.Name, string(p.Net), arch))
	if err != nil {
		return Program{}, wrap.Around("seccomp program "+file+": ", err, " (bug: run go generate ./seccomp)")
	}
	return Program{Policy: p, Arch: arch, Filter: filter, SHA256: sum}, nil
}

// generatedDigest is the sha256 that bpf/generated.txt gives for the
// program file name: its line is "<name> instructions=<n> sha256=<hex>".
func generatedDigest(name string) (string, error) {
	for _, line := range strings.Split(generatedTxt, "\n") {
		rest, ok := strings.CutPrefix(line, name+" ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if d, ok := strings.CutPrefix(f, "sha256="); ok && len(d) == 64 {
				return d, nil
			}
		}
	}
	return "", errors.New("no sha256 for " + name + " in generated.txt")
}

// bpfMaxInsns is the kernel's limit on one classic BPF program (BPF_MAXINSNS).
const bpfMaxInsns = 4096

// decode turns raw struct sock_filter bytes into instructions.
func decode(raw []byte) ([]unix.SockFilter, error) {
	const size = 8 // u16 code, u8 jt, u8 jf, u32 k
	if len(raw) == 0 || len(raw)%size != 0 {
		return nil, errors.New(strconv.Itoa(len(raw)) + " bytes is not a whole number of " + strconv.Itoa(size) + "-byte instructions")
	}
	if n := len(raw) / size; n > bpfMaxInsns {
		return nil, errors.New(strconv.Itoa(n) + " instructions, the kernel takes at most " + strconv.Itoa(bpfMaxInsns))
	}
	out := make([]unix.SockFilter, 0, len(raw)/size)
	for i := 0; i < len(raw); i += size {
		out = append(out, unix.SockFilter{
			Code: binary.LittleEndian.Uint16(raw[i:]),
			Jt:   raw[i+2],
			Jf:   raw[i+3],
			K:    binary.LittleEndian.Uint32(raw[i+4:]),
		})
	}
	return out, nil
}

// Denied lists, one short line each, what the program refuses and how, for
// the run report.
func (p Program) Denied() []string {
	groups, err := rules.Heads(p.Policy.Name, string(p.Policy.Net))
	if err != nil {
		// Programs come from Lookup, which checked the policy.
		return []string{"unknown policy " + p.Policy.String() + " (bug): " + err.Error()}
	}
	out := make([]string, 0, len(groups)+2)
	for _, g := range append(groups, rules.Unknown) {
		out = append(out, g.Summary+": "+unix.ErrnoName(g.Errno))
	}
	if abi, ok := rules.ForeignABI[p.Arch]; ok {
		out = append(out, abi)
	}
	return out
}
