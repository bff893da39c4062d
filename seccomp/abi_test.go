package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/seccomp/internal/rules"
)

func TestForeignABIsKilled(t *testing.T) {
	const x32 = 0x40000000 // __X32_SYSCALL_BIT
	tests := []struct {
		name  string
		arch  string // program
		audit uint32 // seccomp_data.arch
		nr    int32
		want  uint32
	}{
		{"amd64 native read", "amd64", unix.AUDIT_ARCH_X86_64, 0, allow},
		{"amd64 i386 exit", "amd64", unix.AUDIT_ARCH_I386, 1, kill},
		{"amd64 i386 socketcall", "amd64", unix.AUDIT_ARCH_I386, 102, kill},
		{"amd64 i386 read (amd64 number 0)", "amd64", unix.AUDIT_ARCH_I386, 3, kill},
		{"amd64 x32 read", "amd64", unix.AUDIT_ARCH_X86_64, x32, kill},
		{"amd64 x32 socket", "amd64", unix.AUDIT_ARCH_X86_64, x32 | 41, kill},
		{"amd64 x32 execve (x32-only number)", "amd64", unix.AUDIT_ARCH_X86_64, x32 | 520, kill},
		{"amd64 x32 largest", "amd64", unix.AUDIT_ARCH_X86_64, 0x7fffffff, kill},
		{"amd64 program, arm64 data", "amd64", unix.AUDIT_ARCH_AARCH64, 63, kill},
		{"arm64 native read", "arm64", unix.AUDIT_ARCH_AARCH64, 63, allow},
		{"arm64 arm32 read", "arm64", unix.AUDIT_ARCH_ARM, 3, kill},
		{"arm64 arm32 socket", "arm64", unix.AUDIT_ARCH_ARM, 281, kill},
		{"arm64 program, amd64 data", "arm64", unix.AUDIT_ARCH_X86_64, 0, kill},
	}
	for _, p := range policies() {
		for _, tt := range tests {
			vm := newVM(t, p, tt.arch)
			d := seccompData{nr: tt.nr, arch: tt.audit}
			if got := run(t, vm, d); got != tt.want {
				t.Errorf("%v %s: nr %#x arch %#x = %s, want %s", p, tt.name, uint32(tt.nr), tt.audit, action(got), action(tt.want))
			}
		}
	}
}

// TestEveryRuleCompiled runs, for every rule of the table, a syscall that
// matches it through the program and expects the rule's errno: a rule that
// the generator dropped, or compiled with the wrong operands, shows up here.
func TestEveryRuleCompiled(t *testing.T) {
	for _, arch := range rules.Arches {
		for _, p := range policies() {
			groups, err := rules.Groups(p.Name, string(p.Net))
			if err != nil {
				t.Fatalf("rules.Groups(%v) = %v", p, err)
			}
			vm := newVM(t, p, arch)
			n := 0
			for _, g := range groups {
				for _, r := range g.Rules {
					nr := sysnum(r.Syscall, arch)
					if nr == -2 {
						t.Fatalf("syscall %q missing from sysnums", r.Syscall)
					}
					if nr == -1 {
						continue
					}
					d := seccompData{nr: nr, arch: auditArch[arch]}
					for _, c := range r.Conds {
						d.args[c.Arg] = c.Value
						if c.NotEqual {
							d.args[c.Arg] = c.Value + 1
						}
					}
					want := errno(g.Errno)
					if got := run(t, vm, d); got != want {
						t.Errorf("%s %v: %s%v (rule %+v) = %s, want %s", arch, p, r.Syscall, d.args, r.Conds, action(got), action(want))
					}
					n++
				}
			}
			if n < 100 {
				t.Errorf("%s %v: checked %d rules, want at least 100", arch, p, n)
			}
		}
	}
}
