package seccomp

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/seccomp/internal/rules"
	xsys "github.com/scidex/scidex-jail/seccomp/internal/sysnum"
)

// TestUnknownNumbersInInterpreter: numbers the table does not name, in a
// gap or above the highest, get ENOSYS; the newest syscalls get what the
// table decided; -1 and the foreign ABIs keep what libseccomp gives them.
func TestUnknownNumbersInInterpreter(t *testing.T) {
	const x32 = 0x40000000
	tests := []struct {
		name string
		nr   map[string]uint32 // by arch; an arch not listed skips the case
		want uint32
	}{
		{"read, allowed", map[string]uint32{"amd64": 0, "arm64": 63}, allow},
		{"fchmodat2 (452), allowed", both(452), allow},
		{"futex_wake (454), allowed", both(454), allow},
		{"mseal (462), allowed", both(462), allow},
		{"getxattrat (464), allowed", both(464), allow},
		{"file_setattr (469), allowed", both(469), allow},
		{"uretprobe (amd64 335), allowed", map[string]uint32{"amd64": 335}, allow},
		{"rseq_slice_yield (471, the highest), allowed", both(471), allow},
		{"statmount (457), mount API", both(457), errno(unix.EPERM)},
		{"listmount (458), mount API", both(458), errno(unix.EPERM)},
		{"lsm_set_self_attr (460)", both(460), errno(unix.EPERM)},
		{"lsm_get_self_attr (459), allowed", both(459), allow},
		{"open_tree_attr (467), mount API", both(467), errno(unix.EPERM)},
		{"listns (470), namespaces", both(470), errno(unix.EPERM)},
		{"gap 337 (amd64), after uprobe", map[string]uint32{"amd64": 337}, errno(unix.ENOSYS)},
		{"gap 400", both(400), errno(unix.ENOSYS)},
		{"gap 423, before io_uring_setup", both(423), errno(unix.ENOSYS)},
		{"gap 250 (arm64)", map[string]uint32{"arm64": 250}, errno(unix.ENOSYS)},
		{"gap 300 (arm64)", map[string]uint32{"arm64": 300}, errno(unix.ENOSYS)},
		{"not implemented: tuxcall (amd64 184)", map[string]uint32{"amd64": 184}, errno(unix.ENOSYS)},
		{"not implemented: arch_specific_syscall (arm64 244)", map[string]uint32{"arm64": 244}, errno(unix.ENOSYS)},
		{"472, above the highest", both(472), errno(unix.ENOSYS)},
		{"1000", both(1000), errno(unix.ENOSYS)},
		{"amd64 0x3fffffff, below the x32 bit", map[string]uint32{"amd64": x32 - 1}, errno(unix.ENOSYS)},
		{"arm64 0x40000000", map[string]uint32{"arm64": x32}, errno(unix.ENOSYS)},
		{"arm64 0x80000000", map[string]uint32{"arm64": 0x80000000}, errno(unix.ENOSYS)},
		{"arm64 0xfffffffe", map[string]uint32{"arm64": 0xfffffffe}, errno(unix.ENOSYS)},
		{"-1, a tracer's skipped call: as before", both(0xffffffff), allow},
		{"amd64 x32 open_tree_attr: killed as every x32 call", map[string]uint32{"amd64": x32 | 467}, kill},
		{"amd64 0x80000000: killed as x32", map[string]uint32{"amd64": 0x80000000}, kill},
	}
	for _, arch := range rules.Arches {
		for _, p := range policies() {
			vm := newVM(t, p, arch)
			for _, tt := range tests {
				nr, ok := tt.nr[arch]
				if !ok {
					continue
				}
				d := seccompData{nr: int32(nr), arch: auditArch[arch]}
				if got := run(t, vm, d); got != tt.want {
					t.Errorf("%s %v: %s: nr %#x = %s, want %s", arch, p, tt.name, nr, action(got), action(tt.want))
				}
			}
		}
	}
}

func both(nr uint32) map[string]uint32 { return map[string]uint32{"amd64": nr, "arm64": nr} }

// TestTableInProgram runs every syscall x/sys/unix numbers for an
// architecture through its programs: an Allowed one without conditional
// rules is allowed, a NotImplemented one gets ENOSYS, and every number
// below 2048 that x/sys does not name (the gaps, and above the highest)
// gets ENOSYS.
func TestTableInProgram(t *testing.T) {
	conditional := map[string]bool{}
	for _, p := range policies() {
		groups, err := rules.Groups(p.Name, string(p.Net))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			for _, r := range g.Rules {
				if len(r.Conds) > 0 {
					conditional[r.Syscall] = true
				}
			}
		}
	}
	for _, arch := range rules.Arches {
		nums, err := xsys.Read(arch)
		if err != nil {
			t.Fatalf("xsys.Read(%s) = %v", arch, err)
		}
		for _, p := range policies() {
			vm := newVM(t, p, arch)
			check := func(what string, nr, want uint32) {
				t.Helper()
				if got := run(t, vm, seccompData{nr: int32(nr), arch: auditArch[arch]}); got != want {
					t.Errorf("%s %v: %s (nr %d) = %s, want %s", arch, p, what, nr, action(got), action(want))
				}
			}
			for name, nr := range nums {
				switch {
				case slices.Contains(rules.Allowed, name) && !conditional[name]:
					check(name, nr, allow)
				case slices.Contains(rules.NotImplemented, name):
					check(name, nr, errno(unix.ENOSYS))
				}
			}
			numbered := map[uint32]bool{}
			for _, nr := range nums {
				numbered[nr] = true
			}
			for nr := uint32(0); nr < 2048; nr++ {
				if !numbered[nr] {
					check("unknown", nr, errno(unix.ENOSYS))
				}
			}
		}
	}
}

// TestEverySyscallClassified: every syscall golang.org/x/sys/unix (the
// version go.mod pins) names for an architecture the programs are built for
// is allowed, denied or marked not implemented by the table. An x/sys
// upgrade that brings a new one fails here until it is classified; until
// then the programs answer its number ENOSYS.
func TestEverySyscallClassified(t *testing.T) {
	named := map[string]bool{}
	for _, arch := range rules.Arches {
		nums, err := xsys.Read(arch)
		if err != nil {
			t.Fatalf("xsys.Read(%s) = %v", arch, err)
		}
		for n := range nums {
			named[n] = true
		}
		got, err := rules.Unclassified(slices.Sorted(maps.Keys(nums)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			t.Errorf("%s: rules.Unclassified(x/sys/unix's SYS_ names) = %s, want none: add each to Allowed, NotImplemented or a group in seccomp/internal/rules, saying why, then go generate ./seccomp", arch, strings.Join(got, " "))
		}
	}
	// The other way round: a name in Allowed or NotImplemented that x/sys
	// does not know on either architecture is a typo.
	for _, n := range slices.Concat(rules.Allowed, rules.NotImplemented) {
		if !named[n] {
			t.Errorf("rules lists %s, which x/sys/unix names on none of %v (a typo?)", n, rules.Arches)
		}
	}
}
