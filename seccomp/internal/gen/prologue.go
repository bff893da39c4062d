//go:build cgo

package main

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/seccomp/internal/rules"
)

// The prologue runs before libseccomp's program and answers, for the
// native ABI, the numbers the table does not name (ENOSYS) and the
// syscalls libseccomp cannot name (their group's errno). Everything else
// falls through to libseccomp's program, unchanged, which starts again from
// the architecture:
//
//	ld [4]                        arch
//	jeq AUDIT_ARCH_<native>, 0, lib
//	ld [0]                        nr
//	jge 0x40000000, lib  (amd64)  x32 numbers: libseccomp kills; -1 (a
//	jeq 0xffffffff, lib  (arm64)  tracer's skipped call) it lets through
//	jgt hi_1, next, 0             for each span [lo, hi], ascending:
//	jge lo_1, ret_1, lib          nr in [lo, hi] returns its action
//	...
//	ret ERRNO|ENOSYS, ret ERRNO|EPERM, ...
//	lib: libseccomp's program
//
// A number below a span's lo is one the table names. A syscall walks the
// spans up to its own number: two instructions per span passed.

// span is a range of numbers answered by one return value.
type span struct {
	lo, hi uint32
	ret    uint32
}

// prologue is the assembled prologue and the ENOSYS ranges, as text.
type prologue struct {
	insns  []bpf.RawInstruction
	enosys string
}

var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}

// top is the highest number the prologue answers on arch; those above are
// libseccomp's: on amd64 every number with the x32 bit (0x40000000), which
// it kills, and -1, which it lets through as the kernel expects of a call
// a tracer skipped; on arm64 -1.
func top(arch string) uint32 {
	if arch == "amd64" {
		return 0x40000000 - 1
	}
	return 0xffffffff - 1
}

func retErrno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

// spans returns the numbers up to top(arch) that the prologue answers.
func (p *plan) spans() []span {
	var highest uint32
	for nr := range p.known {
		highest = max(highest, nr)
	}
	var out []span
	add := func(nr, ret uint32) {
		if n := len(out); n > 0 && out[n-1].hi == nr-1 && out[n-1].ret == ret {
			out[n-1].hi = nr
			return
		}
		out = append(out, span{nr, nr, ret})
	}
	for nr := uint32(0); nr <= highest; nr++ {
		switch e, deny := p.deny[nr]; {
		case deny:
			add(nr, retErrno(e))
		case !p.known[nr]:
			add(nr, retErrno(rules.Unknown.Errno))
		}
	}
	return append(out, span{highest + 1, top(p.arch), retErrno(rules.Unknown.Errno)})
}

// prologue assembles the prologue of p's program.
func (p *plan) prologue() (prologue, error) {
	arch, ok := auditArch[p.arch]
	if !ok {
		return prologue{}, fmt.Errorf("architecture %q: no audit arch", p.arch)
	}
	spans := p.spans()
	var rets []uint32 // the return instructions, one per value, in order of use
	for _, s := range spans {
		if !slices.Contains(rets, s.ret) {
			rets = append(rets, s.ret)
		}
	}
	head := 4
	lib := head + 2*len(spans) + len(rets)                                             // index of libseccomp's first instruction
	retAt := func(r uint32) int { return head + 2*len(spans) + slices.Index(rets, r) } // rets holds every span's ret
	var skipErr error
	skip := func(from, to int) uint8 { // jump offset from the instruction at from to to
		d := to - from - 1
		if d < 0 || d > 255 {
			skipErr = fmt.Errorf("prologue of %d spans: jump from %d to %d does not fit in 8 bits (bug: split the prologue)", len(spans), from, to)
		}
		return uint8(d)
	}
	insns := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch, SkipFalse: skip(1, lib)},
		bpf.LoadAbsolute{Off: 0, Size: 4},
	}
	if p.arch == "amd64" {
		insns = append(insns, bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: 0x40000000, SkipTrue: skip(3, lib)})
	} else {
		insns = append(insns, bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0xffffffff, SkipTrue: skip(3, lib)})
	}
	for i, s := range spans {
		at := head + 2*i
		next := at + 2
		if i == len(spans)-1 {
			next = lib
		}
		insns = append(insns,
			bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: s.hi, SkipTrue: skip(at, next)},
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: s.lo, SkipTrue: skip(at+1, retAt(s.ret)), SkipFalse: skip(at+1, lib)})
	}
	for _, r := range rets {
		insns = append(insns, bpf.RetConstant{Val: r})
	}
	if skipErr != nil {
		return prologue{}, skipErr
	}
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return prologue{}, fmt.Errorf("assemble prologue: %w", err)
	}
	return prologue{insns: raw, enosys: enosysText(spans)}, nil
}

// enosysText lists the ENOSYS spans as "181-185 214 337-423 472-0x3fffffff".
func enosysText(spans []span) string {
	num := func(n uint32) string {
		if n > 0xffff {
			return "0x" + strconv.FormatUint(uint64(n), 16)
		}
		return strconv.FormatUint(uint64(n), 10)
	}
	var parts []string
	for _, s := range spans {
		if s.ret != retErrno(rules.Unknown.Errno) {
			continue
		}
		if s.lo == s.hi {
			parts = append(parts, num(s.lo))
		} else {
			parts = append(parts, num(s.lo)+"-"+num(s.hi))
		}
	}
	return strings.Join(parts, " ")
}

// bytes is the program as the kernel reads it (struct sock_filter, little
// endian as libseccomp writes on amd64 and arm64).
func (p prologue) bytes() []byte {
	b := make([]byte, 0, 8*len(p.insns))
	for _, in := range p.insns {
		b = binary.LittleEndian.AppendUint16(b, in.Op)
		b = append(b, in.Jt, in.Jf)
		b = binary.LittleEndian.AppendUint32(b, in.K)
	}
	return b
}
