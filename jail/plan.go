package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// initConfig turns the spec into the init's instructions: the mount view,
// the Landlock and seccomp policies, the target's argv and environment.
func (sv *supervisor) initConfig() (*initConfig, error) {
	s := sv.spec
	var ro []string
	var dataEnv []string // where each data dir appears inside, so a script need not be told
	for _, d := range s.DataDirs {
		p := filepath.Join(s.Root, d)
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			sv.rep.Warnings = append(sv.rep.Warnings, fmt.Sprintf("%s/ not found under --root %s: not mounted", d, s.Root))
			continue
		}
		ro = append(ro, p)
		dataEnv = append(dataEnv, "SCIDEX_"+envName(d)+"_DIR="+p)
	}
	ro = append(ro, s.ReadOnly...)
	host := lookHost(s.Net)
	// Bound read-only besides ro: caches, and resolv.conf's target when it
	// lies outside /etc.
	sysRO := append([]string{}, host.extras...)
	if host.dns != "" && !strings.HasPrefix(host.dns, "/etc/") {
		sysRO = append(sysRO, host.dns)
	}
	allRO := append(sysRO, ro...)
	rw := s.ReadWrite
	hostname := "scidex-" + s.ID
	if len(hostname) > 64 {
		hostname = hostname[:64]
	}
	_, _, setgroups := sv.hostIDs()
	cfg := &initConfig{
		Command:   s.Command,
		Env:       s.targetEnv(dataEnv),
		RunDir:    sv.dir.path,
		Hostname:  hostname,
		UID:       InsideUID,
		GID:       InsideUID,
		Setgroups: setgroups,
		Net:       string(s.Net),
		Mounts: mountPlan{
			System:      host.system,
			ReadOnly:    allRO,
			ReadWrite:   rw,
			RunDir:      sv.dir.path,
			RunDirBytes: s.DiskBytes,
			ShmBytes:    s.ShmBytes,
		},
		Security: securityConfig{
			Landlock: sv.landlockPolicy(host, ro, rw),
			Seccomp:  sv.seccompPolicy(),
		},
	}
	m := &sv.rep.Enforced.Mounts
	m.ReadOnly = allRO
	m.ReadWrite = append([]string{}, rw...)
	m.ShmBytes = cfg.Mounts.ShmBytes
	for _, e := range cfg.Mounts.System {
		m.System = append(m.System, e.Path)
	}
	m.RunDir = "bound from the host (no disk budget)"
	if s.DiskBytes > 0 {
		m.RunDir = fmt.Sprintf("tmpfs of %d bytes (disk budget)", s.DiskBytes)
	}
	return cfg, nil
}

// varExtras are caches outside the system dirs that save every run work:
// without fontconfig's, matplotlib rebuilds it into the run directory (about
// 0.1 s and 50 KB of the disk budget each time). Bound read-only when present.
var varExtras = []string{"/var/cache/fontconfig"}

// hostView is what a run takes from the host's own layout, looked at once
// per run by the supervisor: the system entries to bind, the caches, and the
// resolver configuration (host network mode only).
type hostView struct {
	system []systemEntry
	extras []string
	dns    string
}

func lookHost(net NetMode) hostView {
	h := hostView{system: hostSystemEntries(), extras: systemExtras()}
	if net == NetHost {
		// Only host mode has a resolver to reach.
		h.dns = resolvConf()
	}
	return h
}

// envName turns a data dir's name into the middle of an environment
// variable's name: data -> DATA, raw-v2 -> RAW_V2.
func envName(d string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToUpper(d))
}

func systemExtras() []string {
	out := []string{}
	for _, p := range varExtras {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// blasThreads caps the thread pools of BLAS and OpenMP at the CPU quota,
// unless the caller chose: more threads than CPUs only thrash under a
// quota, and each one counts against the PID limit.
func blasThreads(env []string, cpus float64) []string {
	if cpus <= 0 {
		return env
	}
	n := fmt.Sprint(int(cpus + 0.999))
	for _, k := range []string{"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"} {
		set := false
		for _, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				set = true
			}
		}
		if !set {
			env = append(env, k+"="+n)
		}
	}
	return env
}
