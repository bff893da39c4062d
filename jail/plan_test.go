package jail

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/view"
)

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

func testSpec() *Spec {
	return &Spec{ID: "a1", Command: []string{"python3", "x.py"}, TmpRoot: "/tmp", Root: "/srv/platform",
		DataDirs: []string{"data", "docs"}, Net: "none", HostUID: 65534, HostGID: 65534,
		Limits: limits.Of(L{limits.Disk: 1 << 20, limits.Shm: 1 << 20, limits.Memory: 1 << 30, limits.CPUQuota: 1, limits.PIDs: 64})}
}

func TestBuildPlan(t *testing.T) {
	cases := []struct {
		name  string
		spec  func(*Spec)
		host  func(*view.HostView)
		check func(t *testing.T, p *Plan, warnings []string, err error)
	}{
		{"default", nil, nil, func(t *testing.T, p *Plan, warnings []string, err error) {
			if err != nil {
				t.Fatalf("BuildPlan = %v, want nil", err)
			}
			var names []string
			for _, ns := range p.Namespaces {
				names = append(names, ns.Name)
			}
			if want := []string{"user", "mount", "pid", "net", "ipc", "uts", "cgroup"}; !slices.Equal(names, want) {
				t.Errorf("namespaces = %q, want %q", names, want)
			}
			if !reflect.DeepEqual(p.IDs, IDMap{HostUID: 65534, HostGID: 65534, Setgroups: true}) {
				t.Errorf("IDs = %+v, want 65534:65534 with setgroups", p.IDs)
			}
			if p.Cgroup == nil || !reflect.DeepEqual(p.Cgroup.Limits, cgroupLimits(limits.Of(L{limits.Memory: 1 << 30, limits.CPUQuota: 1, limits.PIDs: 64}))) {
				t.Errorf("Cgroup = %+v, want the spec's limits", p.Cgroup)
			}
			if len(p.Unheld) != 0 {
				t.Errorf("Unheld = %q, want none (the leaf holds them)", limitNames(p.Unheld))
			}
			in := p.Init
			if in.RunDir != "/tmp/scidex-analysis-a1" || in.Mounts.RunDir != in.RunDir || in.Mounts.RunDirBytes != 1<<20 {
				t.Errorf("run dir = %q, mounts %q of %d bytes, want /tmp/scidex-analysis-a1 as a 1 MiB tmpfs", in.RunDir, in.Mounts.RunDir, in.Mounts.RunDirBytes)
			}
			if !slices.Contains(in.Env, "HOME=/home/analysis") || !slices.Contains(in.Env, "TMPDIR=/home/analysis/tmp") || !slices.Contains(in.Env, "SCIDEX_DATA_DIR=/srv/platform/data") || !slices.Contains(in.Env, "OMP_NUM_THREADS=1") {
				t.Errorf("env = %q, want HOME and TMPDIR in the scratch, the data dir and the BLAS threads", in.Env)
			}
			if m := in.Mounts; m.Scratch != "/home/analysis" || m.ScratchTmp != "/home/analysis/tmp" || m.ScratchBytes != 0 || m.KeepScratch {
				t.Errorf("scratch = %q (tmp %q, %d bytes, keep %v), want /home/analysis in the run directory's budget", m.Scratch, m.ScratchTmp, m.ScratchBytes, m.KeepScratch)
			}
			if want := []string{"/var/cache/fontconfig", "/srv/platform/data"}; !slices.Equal(in.Mounts.ReadOnly, want) {
				t.Errorf("read-only mounts = %q, want %q", in.Mounts.ReadOnly, want)
			}
			// docs/ is not there: said once in the report, no warning.
			if len(warnings) != 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if want := []protocol.Link{{Name: "data", Target: "/srv/platform/data"}}; !slices.Equal(in.Mounts.Links, want) {
				t.Errorf("run directory's links = %+v, want %+v", in.Mounts.Links, want)
			}
			if got := p.Enforced.Mounts.DataDirs; len(got) != 2 || !strings.HasPrefix(got[0], "data: /srv/platform/data, read-only, also at ./data") || !strings.HasPrefix(got[1], "docs: not mounted") {
				t.Errorf("enforced.mounts.data_dirs = %q, want data/ linked at ./data and docs/ not mounted", got)
			}
			ll := in.Security.Landlock
			if ll == nil || ll.MinABI != 7 || !ll.AllowDegraded || !slices.Contains(ll.ReadWrite, "/tmp/scidex-analysis-a1") || !slices.Contains(ll.ReadWrite, "/home/analysis") || !slices.Contains(ll.ReadExec, "/usr") || slices.Contains(ll.ReadExec, "/bin") {
				t.Errorf("landlock = %+v, want MinABI 7, rw on the run dir, rx on /usr but not the /bin link", ll)
			}
			if in.Security.Seccomp == nil || in.Security.Seccomp.String() != "default/none" {
				t.Errorf("seccomp = %v, want default/none", in.Security.Seccomp)
			}
			if in.Loopback {
				t.Errorf("Loopback = true for net none")
			}
			if got := p.Enforced.Promises[promise.PromiseFSWrite]; !slices.Equal(got, []promise.Layer{promise.LayerMountView, promise.LayerLandlockFS}) {
				t.Errorf("enforced promises fs_write = %q", got)
			}
		}},
		{"net host, rootless", func(s *Spec) { s.Net, s.AllowTCP = "host", []uint16{443} }, func(h *view.HostView) {
			h.EUID, h.EGID, h.DNS = 1000, 1000, "/run/systemd/resolve/stub-resolv.conf"
		}, func(t *testing.T, p *Plan, _ []string, err error) {
			if err != nil {
				t.Fatalf("BuildPlan = %v, want nil", err)
			}
			if slices.ContainsFunc(p.Namespaces, func(n Namespace) bool { return n.Name == "net" }) {
				t.Errorf("namespaces %v hold net in host mode", p.Namespaces)
			}
			if !reflect.DeepEqual(p.IDs, IDMap{HostUID: 1000, HostGID: 1000}) {
				t.Errorf("IDs = %+v, want our own 1000:1000 without setgroups", p.IDs)
			}
			if !slices.Contains(p.Init.Mounts.ReadOnly, "/run/systemd/resolve/stub-resolv.conf") {
				t.Errorf("read-only mounts %q lack resolv.conf's target outside /etc", p.Init.Mounts.ReadOnly)
			}
			ll := p.Init.Security.Landlock
			if !ll.HandleTCP || !slices.Equal(ll.ConnectTCP, []uint16{443}) {
				t.Errorf("landlock TCP = %v %v, want connect to 443 only", ll.HandleTCP, ll.ConnectTCP)
			}
		}},
		{"layers disabled by name", func(s *Spec) {
			s.OptIns, _ = promise.ParseOptIns(promise.OptInDisable, []string{"landlock", "seccomp", "cgroup"})
		}, nil, func(t *testing.T, p *Plan, _ []string, err error) {
			if err != nil {
				t.Fatalf("BuildPlan = %v, want nil (disabled by name)", err)
			}
			if p.Cgroup != nil || p.Init.Security.Landlock != nil || p.Init.Security.Seccomp != nil {
				t.Errorf("plan keeps a disabled layer: cgroup %v, landlock %v, seccomp %v", p.Cgroup, p.Init.Security.Landlock, p.Init.Security.Seccomp)
			}
			if d := strings.Join(p.Enforced.Degraded, "\n"); !strings.Contains(d, "fs_write") || !strings.Contains(d, "kernel_surface") || !strings.Contains(d, "limits") {
				t.Errorf("degraded = %q, want fs_write, kernel_surface and limits", d)
			}
			// The report's limits.not_enforced is the plan's: the leaf's
			// rows, none of them switched off.
			if got, want := limitNames(p.Unheld), []string{"memory", "swap", "cpus", "pids"}; !slices.Equal(got, want) {
				t.Errorf("Unheld = %q, want %q", got, want)
			}
		}},
		{"no Landlock is refused", nil, func(h *view.HostView) { h.Layers.LandlockABI = 0 }, func(t *testing.T, p *Plan, _ []string, err error) {
			var pe *PlanError
			if !errors.As(err, &pe) || pe.Stage != "promises" || !strings.Contains(err.Error(), "fs_write") {
				t.Fatalf("BuildPlan = %v, want a PlanError at stage promises naming fs_write", err)
			}
			if p == nil || len(p.Enforced.Promises) == 0 {
				t.Errorf("plan = %+v, want its promises even when refused", p)
			}
		}},
		{"loopback", func(s *Spec) { s.Net = "loopback" }, func(h *view.HostView) {}, func(t *testing.T, p *Plan, _ []string, err error) {
			if err != nil || !p.Init.Loopback {
				t.Errorf("BuildPlan = %v, Loopback %v, want nil, true", err, p.Init.Loopback)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, h := testSpec(), testHost()
			if c.spec != nil {
				c.spec(s)
			}
			if c.host != nil {
				c.host(&h)
			}
			p, w, err := BuildPlan(asResolved(s), h)
			c.check(t, p, w, err)
		})
	}
}

// TestBuildPlanRefusesGroupExposure: the rule is part of the plan, a
// refusal at stage promises, not a failure of the init.
func TestBuildPlanRefusesGroupExposure(t *testing.T) {
	s, h := testSpec(), testHost()
	h.EUID, h.EGID, h.OverflowGID = 1001, 1002, 65534
	h.Groups = []report.HostGroup{{GID: 1003, Name: "lab"}}
	h.Exposed = []view.ExposedPath{{Path: "/srv/platform/data", UID: 0, GID: 1003, Mode: 0o750}}
	_, _, err := BuildPlan(asResolved(s), h)
	var pe *PlanError
	var ge *view.GroupExposureError
	if !errors.As(err, &pe) || pe.Stage != "promises" || !errors.As(err, &ge) || ge.Group.Name != "lab" {
		t.Fatalf("BuildPlan = %v, want a *PlanError of stage promises wrapping a *GroupExposureError for lab", err)
	}
	if strings.Contains(err.Error(), "bug:") {
		t.Errorf("BuildPlan = %v, want no bug: message", err)
	}
}

func limitNames(ls []*limits.Limit) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}
