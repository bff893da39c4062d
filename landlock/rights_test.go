package landlock

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Policies the decision tables below are computed for.
var (
	fsOnly    = Policy{ReadExec: []string{"/usr"}, ReadOnly: []string{"/data"}}
	withRW    = Policy{ReadExec: []string{"/usr"}, ReadWrite: []string{"/tmp/run"}}
	withTCP   = Policy{ReadWrite: []string{"/tmp/run"}, HandleTCP: true, ConnectTCP: []uint16{443}}
	withAll   = Policy{ReadWrite: []string{"/tmp/run"}, HandleTCP: true, Scope: true}
	scopeNoRW = Policy{ReadOnly: []string{"/data"}, Scope: true}
)

func TestRequired(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		want int
	}{
		{"filesystem only", fsOnly, 5},
		{"read-write", withRW, 5},
		{"tcp", withTCP, 5},
		{"tcp and scope", withAll, 6},
		{"scope without rw", scopeNoRW, 6},
		{"empty policy", Policy{}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := required(tt.p); got != tt.want {
				t.Errorf("required(%+v) = %d, want %d", tt.p, got, tt.want)
			}
		})
	}
}

// TestLostFeatures is the decision table for every ABI up to this host's:
// what each kernel would leave unenforced.
func TestLostFeatures(t *testing.T) {
	const (
		refer = "fs.refer"
		trunc = "fs.truncate"
		tcp   = "net.tcp"
		ioctl = "fs.ioctl_dev"
		sig   = "scope.signal"
		abs   = "scope.abstract_unix_socket"
	)
	tests := []struct {
		name string
		p    Policy
		abi  int
		want []string // feature names; nil: enforced in full
	}{
		{"fs only ABI 1", fsOnly, 1, []string{trunc, ioctl}},
		{"fs only ABI 2", fsOnly, 2, []string{trunc, ioctl}},
		{"fs only ABI 3", fsOnly, 3, []string{ioctl}},
		{"fs only ABI 4", fsOnly, 4, []string{ioctl}},
		{"fs only ABI 5", fsOnly, 5, nil},
		{"fs only ABI 6", fsOnly, 6, nil},
		{"fs only ABI 7", fsOnly, 7, nil},
		{"rw ABI 1", withRW, 1, []string{refer, trunc, ioctl}},
		{"rw ABI 2", withRW, 2, []string{trunc, ioctl}},
		{"rw ABI 5", withRW, 5, nil},
		{"tcp ABI 1", withTCP, 1, []string{refer, trunc, tcp, ioctl}},
		{"tcp ABI 3", withTCP, 3, []string{tcp, ioctl}},
		{"tcp ABI 4", withTCP, 4, []string{ioctl}},
		{"tcp ABI 5", withTCP, 5, nil},
		{"all ABI 1", withAll, 1, []string{refer, trunc, tcp, ioctl, sig, abs}},
		{"all ABI 2", withAll, 2, []string{trunc, tcp, ioctl, sig, abs}},
		{"all ABI 3", withAll, 3, []string{tcp, ioctl, sig, abs}},
		{"all ABI 4", withAll, 4, []string{ioctl, sig, abs}},
		{"all ABI 5", withAll, 5, []string{sig, abs}},
		{"all ABI 6", withAll, 6, nil},
		{"all ABI 7", withAll, 7, nil},
		{"all ABI 11", withAll, 11, nil},
		{"scope without rw ABI 1", scopeNoRW, 1, []string{trunc, ioctl, sig, abs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lost := lostFeatures(tt.p, tt.abi)
			if got := featureNames(lost); !slices.Equal(got, tt.want) {
				t.Errorf("lostFeatures(%+v, %d) = %q, want features %q", tt.p, tt.abi, lost, tt.want)
			}
			for _, l := range lost {
				if !strings.Contains(l, "(needs ABI ") {
					t.Errorf("lostFeatures(%+v, %d) entry %q, want it to name the ABI needed", tt.p, tt.abi, l)
				}
			}
			// Consistency: lost exactly when the ABI is below required.
			if full := len(lost) == 0; full != (tt.abi >= required(tt.p)) {
				t.Errorf("lostFeatures(%+v, %d) empty = %v, want %v (required %d)", tt.p, tt.abi, full, !full, required(tt.p))
			}
		})
	}
	t.Run("no landlock", func(t *testing.T) {
		for _, p := range []Policy{fsOnly, withAll} {
			if got, want := lostFeatures(p, 0), []string{"landlock: not enforced at all"}; !slices.Equal(got, want) {
				t.Errorf("lostFeatures(%+v, 0) = %q, want %q", p, got, want)
			}
		}
	})
}

func TestHandled(t *testing.T) {
	tests := []struct {
		abi    int
		fs     accessFS
		net    accessNet
		scoped scopeSet
	}{
		{0, 0, 0, 0},
		{1, llsys.AccessFSMakeSym<<1 - 1, 0, 0},
		{2, llsys.AccessFSRefer<<1 - 1, 0, 0},
		{3, llsys.AccessFSTruncate<<1 - 1, 0, 0},
		{4, llsys.AccessFSTruncate<<1 - 1, llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP, 0},
		{5, llsys.AccessFSIoctlDev<<1 - 1, llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP, 0},
		{6, llsys.AccessFSIoctlDev<<1 - 1, llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP, llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket},
		{7, llsys.AccessFSIoctlDev<<1 - 1, llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP, llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket},
		// ABI 9 adds resolve_unix as hardening; UDP (ABI 10) stays unhandled.
		{10, llsys.AccessFSResolveUnix<<1 - 1, llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP, llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket},
	}
	for _, tt := range tests {
		t.Run("ABI "+strconv.Itoa(tt.abi), func(t *testing.T) {
			if got := handledFS(tt.abi); got != tt.fs {
				t.Errorf("handledFS(%d) = %v, want %v", tt.abi, got, tt.fs)
			}
			if got := handledNet(withAll, tt.abi); got != tt.net {
				t.Errorf("handledNet(HandleTCP, %d) = %v, want %v", tt.abi, got, tt.net)
			}
			if got := scoped(withAll, tt.abi); got != tt.scoped {
				t.Errorf("scoped(Scope, %d) = %v, want %v", tt.abi, got, tt.scoped)
			}
			if got := handledNet(fsOnly, tt.abi) | accessNet(scoped(fsOnly, tt.abi)); got != 0 {
				t.Errorf("handledNet|scoped(fs-only policy, %d) = %v, want none", tt.abi, got)
			}
		})
	}
}

func TestPathRights(t *testing.T) {
	all := handledFS(7)
	tests := []struct {
		name    string
		list    accessFS
		isDir   bool
		handled accessFS
		want    accessFS
	}{
		{"rx dir", rightsReadExec, true, all, llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir},
		{"rx file", rightsReadExec, false, all, llsys.AccessFSExecute | llsys.AccessFSReadFile},
		{"ro dir", rightsReadOnly, true, all, llsys.AccessFSReadFile | llsys.AccessFSReadDir},
		{"ro file", rightsReadOnly, false, all, llsys.AccessFSReadFile},
		{"rw dir", rightsReadWrite, true, all, rightsReadWrite},
		{"rw file", rightsReadWrite, false, all, llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile | llsys.AccessFSTruncate},
		{"rw dir ABI 1", rightsReadWrite, true, handledFS(1), rightsReadWrite &^ (llsys.AccessFSRefer | llsys.AccessFSTruncate)},
		{"dev file", rightsDevice, false, all, llsys.AccessFSReadFile | llsys.AccessFSWriteFile | llsys.AccessFSIoctlDev},
		{"dev file ABI 4", rightsDevice, false, handledFS(4), llsys.AccessFSReadFile | llsys.AccessFSWriteFile},
		{"dev dir", rightsDevice, true, all, rightsDevice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pathRights(tt.list, tt.isDir, tt.handled)
			if got != tt.want {
				t.Errorf("pathRights(%v, dir=%v, %v) = %v, want %v", tt.list, tt.isDir, tt.handled, got, tt.want)
			}
			if !tt.isDir && got&^fileRights != 0 {
				t.Errorf("pathRights(%v, file) = %v, want only file rights", tt.list, got)
			}
		})
	}
	// What must never be granted anywhere.
	for _, l := range []accessFS{rightsReadExec, rightsReadOnly, rightsReadWrite, rightsDevice} {
		if bad := l & (llsys.AccessFSMakeChar | llsys.AccessFSMakeBlock | llsys.AccessFSResolveUnix); bad != 0 {
			t.Errorf("list rights %v include %v, want no device creation and no resolve_unix", l, bad)
		}
	}
	if rightsReadOnly&(llsys.AccessFSExecute|llsys.AccessFSWriteFile) != 0 {
		t.Errorf("rightsReadOnly = %v, want neither execute nor write", rightsReadOnly)
	}
}

// featureNames returns the feature names that start the Degraded entries.
func featureNames(degraded []string) []string {
	names := make([]string, len(degraded))
	for i, d := range degraded {
		names[i], _, _ = strings.Cut(d, " ")
	}
	return names
}

// TestRules: the rules a policy gets on a kernel of each ABI, told
// without the kernel (what the jail's report lists from the plan).
func TestRules(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		abi  int
		want []string
	}{
		{"no Landlock", fsOnly, 0, nil},
		{"paths in list order", Policy{ReadWrite: []string{"/tmp/run"}, ReadExec: []string{"/usr"}, Devices: []string{"/dev/null"}}, 7, []string{"rx /usr", "rw /tmp/run", "dev /dev/null"}},
		{"tcp on ABI 4", withTCP, 4, []string{"rw /tmp/run", "tcp-connect 443", "tcp-bind none"}},
		{"tcp below ABI 4", withTCP, 3, []string{"rw /tmp/run"}},
		{"all on ABI 6", withAll, 6, []string{"rw /tmp/run", "tcp-connect none", "tcp-bind none", "scope signal", "scope abstract-unix-socket"}},
		{"scope below ABI 6", withAll, 5, []string{"rw /tmp/run", "tcp-connect none", "tcp-bind none"}},
	}
	for _, tt := range tests {
		if got := tt.p.Rules(tt.abi); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Rules(%d) = %q, want %q", tt.name, tt.abi, got, tt.want)
		}
	}
}
