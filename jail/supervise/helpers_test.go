package supervise

import (
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/view"
)

// The plan's test host and spec, as package jail's tests have them
// (plan_test.go): the run's tests build their plans from the same.

// testHost is a host as LookHost would see it, written out: BuildPlan is
// tested on it without root and without looking at this machine.
func testHost() view.HostView {
	return view.HostView{
		EUID: 0, EGID: 0,
		System:   []protocol.SystemEntry{{Path: "/usr"}, {Path: "/bin", Symlink: "usr/bin"}, {Path: "/etc"}},
		Extras:   []string{"/var/cache/fontconfig"},
		DataDirs: []string{"/srv/platform/data"},
		Etc:      []string{"/etc/passwd", "/etc/ssl"},
		Devices:  []string{"/dev/null"},
		Layers:   promise.HostLayers{LandlockABI: 7}, // BuildPlan adds the network mode's row
	}
}

func testSpec() *jail.Spec {
	return &jail.Spec{ID: "a1", Command: []string{"python3", "x.py"}, TmpRoot: "/tmp", Root: "/srv/platform",
		DataDirs: []string{"data", "docs"}, Net: "none", HostUID: 65534, HostGID: 65534,
		Limits: limits.Of(L{limits.Disk: 1 << 20, limits.Shm: 1 << 20, limits.Memory: 1 << 30, limits.CPUQuota: 1, limits.PIDs: 64})}
}

// L is a table of limit values, for limits.Of.
type L = map[*limits.Limit]any

func asResolved(s *jail.Spec) *jail.Resolved { return &jail.Resolved{Spec: *s, RealTmpRoot: s.TmpRoot} }
