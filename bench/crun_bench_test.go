package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// crun (Debian's crun package) is the peer that enforces what the jail's
// run enforces: a cgroup leaf with the same memory, swap, CPU and PID
// limits, every namespace (user, mount, pid, net, ipc, uts, cgroup), the
// analysis as uid 1000 mapped to 65534 (the jail: an id leased per run), a read-only root showing /usr and
// /etc, fresh /proc, /dev and /tmp, no capabilities, no_new_privs and a
// seccomp deny-list. It has no Landlock and no report. Its pairs are
// information: a C runtime is no target for a Go jail.
//
// crun cannot run on this hybrid host as it is, and must not. Its cgroupfs
// manager (libcrun/cgroup.c, read, not tried on the host, where it could
// make leaves at the hierarchies' roots) calls a host with cgroup2 mounted at
// /sys/fs/cgroup/unified hybrid and refuses it when that hierarchy has a
// controller ("cgroups in hybrid mode not supported": hugetlb here), and on
// cgroup v1 it makes an absolute linux.cgroupsPath below the root of each
// hierarchy, which for memory is outside this process' cgroup. So crun runs
// in a cgroup view of its own (cgview_test.go), never the host's: a holder
// process keeps crunView, the v1 hierarchies without cgroup2, whose roots
// are this process' own cgroups. crun sees a pure cgroup v1 host and
// "/<leaf>" lands below our cgroups, as the jail's leaves do. Each run
// enters the view with nsenter, whose exec (0.9 ms here, hyperfine: 1.5 ms
// against 0.6 for /usr/bin/true alone) is counted in crun's time.

// crunView is crun's view: no cgroup2 mount, or crun calls the host hybrid.
var crunView = cgroupView{V1: viewControllers}

// crunDeny is the seccomp deny-list given to crun (EPERM): the kernel
// attack surface the jail's own filter denies, in short.
var crunDeny = []string{"mount", "umount2", "pivot_root", "ptrace", "bpf", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "keyctl", "add_key", "request_key", "perf_event_open",
	"userfaultfd", "unshare", "setns", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"open_by_handle_at", "swapon", "swapoff", "reboot"}

// crunPeer is one crun side of a pair: its bundle and the view it runs in,
// set up by prepare.
type crunPeer struct {
	command []string
	dir     string    // the bundle (config.json, rootfs) and crun's --root
	holder  *exec.Cmd // holds the mount and cgroup namespaces of the view
	leaf    string    // linux.cgroupsPath's name
}

// crunPair is the full jail against crun on command, for information.
func crunPair(name string, command ...string) pair {
	c := &crunPeer{command: command}
	return pair{name: name, info: true, treeCPU: true, prepare: c.prepare, note: crunNote,
		a: func(d dirs) *exec.Cmd { return fullJail(d, command...) },
		b: func(dirs) *exec.Cmd { return c.cmd() }}
}

// crunNote is printed under crun's rows.
const crunNote = "B: crun --cgroup-manager=cgroupfs in a cgroup v1 view of its own (nsenter's exec, about 0.9 ms, counted in B): same limits, namespaces and read-only root, seccomp, no Landlock"

var crunSeq int

// cmd is one `crun run` of the bundle inside the view.
func (c *crunPeer) cmd() *exec.Cmd {
	crunSeq++
	id := fmt.Sprintf("scidex-bench-%d-%d", os.Getpid(), crunSeq)
	return exec.Command("nsenter", "--target", fmt.Sprint(c.holder.Process.Pid), "--mount", "--cgroup", "--",
		"crun", "--root", filepath.Join(c.dir, "state"), "--cgroup-manager=cgroupfs",
		"run", "--bundle", c.dir, id)
}

// prepare writes the bundle and starts the view's holder; both go with
// tb's cleanup, and so does any leaf crun left.
func (c *crunPeer) prepare(tb testing.TB) error {
	if _, err := exec.LookPath("crun"); err != nil {
		return fmt.Errorf("crun not found: install it (apt-get install -y crun); .ci/deps does")
	}
	dir, err := os.MkdirTemp("", "scidex-bench-crun-")
	if err != nil {
		return err
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	c.dir = dir
	c.leaf = fmt.Sprintf("scidex-bench-crun-%d", os.Getpid())
	if err := c.writeBundle(); err != nil {
		return err
	}
	tb.Cleanup(c.removeLeaves)
	return c.startHolder(tb)
}

func (c *crunPeer) startHolder(tb testing.TB) error {
	if err := viewUnavailable(); err != nil {
		return err
	}
	// The view, then a line on stdout, then nothing until killed.
	h := crunView.cmd("sh", "-c", "echo ready; exec sleep infinity")
	var stderr strings.Builder
	h.Stderr = &stderr
	out, err := h.StdoutPipe()
	if err != nil {
		return err
	}
	if err := h.Start(); err != nil {
		return fmt.Errorf("start crun's cgroup view (unshare): %w", err)
	}
	tb.Cleanup(func() { h.Process.Kill(); h.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		h.Process.Kill()
		h.Wait()
		return fmt.Errorf("crun's cgroup view (unshare -m -C, cgroup v1 mounts): %v: %s", err, stderr.String())
	}
	c.holder = h
	return nil
}

// removeLeaves removes the leaf crun makes in each of our own cgroups of
// crunView, if a run left it (crun removes it as it ends).
func (c *crunPeer) removeLeaves() {
	cgs, err := testutil.OwnCgroups()
	if err != nil {
		return
	}
	for _, cg := range cgs {
		if cg.Version != 1 || len(cg.Dirs) == 0 || !slices.ContainsFunc(cg.Controllers, func(s string) bool { return slices.Contains(crunView.V1, s) }) {
			continue
		}
		d := filepath.Join(cg.Dirs[0], c.leaf)
		for i := 0; i < 100; i++ {
			if err := os.Remove(d); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// The parts of an OCI runtime spec (config.json) the bundle uses.
type (
	ociSpec struct {
		Version  string     `json:"ociVersion"`
		Process  ociProcess `json:"process"`
		Root     ociRoot    `json:"root"`
		Hostname string     `json:"hostname"`
		Mounts   []ociMount `json:"mounts"`
		Linux    ociLinux   `json:"linux"`
	}
	ociProcess struct {
		User            ociUser  `json:"user"`
		Args            []string `json:"args"`
		Env             []string `json:"env"`
		Cwd             string   `json:"cwd"`
		NoNewPrivileges bool     `json:"noNewPrivileges"`
	}
	ociUser struct {
		UID int `json:"uid"`
		GID int `json:"gid"`
	}
	ociRoot struct {
		Path     string `json:"path"`
		Readonly bool   `json:"readonly"`
	}
	ociMount struct {
		Destination string   `json:"destination"`
		Type        string   `json:"type"`
		Source      string   `json:"source"`
		Options     []string `json:"options,omitempty"`
	}
	ociLinux struct {
		Namespaces  []ociNamespace `json:"namespaces"`
		UIDMappings []ociIDMap     `json:"uidMappings"`
		GIDMappings []ociIDMap     `json:"gidMappings"`
		CgroupsPath string         `json:"cgroupsPath"`
		Resources   ociResources   `json:"resources"`
		Seccomp     ociSeccomp     `json:"seccomp"`
	}
	ociNamespace struct {
		Type string `json:"type"`
	}
	ociIDMap struct {
		ContainerID int `json:"containerID"`
		HostID      int `json:"hostID"`
		Size        int `json:"size"`
	}
	ociResources struct {
		Memory ociMemory `json:"memory"`
		CPU    ociCPU    `json:"cpu"`
		Pids   ociPids   `json:"pids"`
	}
	ociMemory struct {
		Limit int64 `json:"limit"`
		Swap  int64 `json:"swap"`
	}
	ociCPU struct {
		Quota  int64 `json:"quota"`
		Period int64 `json:"period"`
	}
	ociPids struct {
		Limit int64 `json:"limit"`
	}
	ociSeccomp struct {
		DefaultAction string           `json:"defaultAction"`
		Syscalls      []ociSyscallRule `json:"syscalls"`
	}
	ociSyscallRule struct {
		Names  []string `json:"names"`
		Action string   `json:"action"`
	}
)

// crunSpec is the bundle's config: the limits fullJail gives the jail
// (--memory 256M, swap none, --cpus 1, --pids 64), the analysis uid the
// jail uses (1000 inside; on the host a fixed 65534 here, where the jail
// leases one per run: a few µs, not worth a lease of crun's own).
func (c *crunPeer) crunSpec() ociSpec {
	ro := []string{"rbind", "ro", "nosuid", "nodev"}
	s := ociSpec{Version: "1.0.2", Hostname: "jail",
		Process: ociProcess{User: ociUser{UID: 1000, GID: 1000}, Args: c.command,
			Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/tmp", NoNewPrivileges: true},
		Root: ociRoot{Path: "rootfs", Readonly: true},
		Mounts: []ociMount{
			{Destination: "/usr", Type: "bind", Source: "/usr", Options: ro},
			{Destination: "/etc", Type: "bind", Source: "/etc", Options: ro},
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "noexec", "mode=755"}},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}},
		},
		Linux: ociLinux{CgroupsPath: "/" + c.leaf,
			UIDMappings: []ociIDMap{{ContainerID: 1000, HostID: 65534, Size: 1}},
			GIDMappings: []ociIDMap{{ContainerID: 1000, HostID: 65534, Size: 1}},
			Seccomp: ociSeccomp{DefaultAction: "SCMP_ACT_ALLOW",
				Syscalls: []ociSyscallRule{{Names: crunDeny, Action: "SCMP_ACT_ERRNO"}}}},
	}
	for _, ns := range []string{"user", "mount", "pid", "network", "ipc", "uts", "cgroup"} {
		s.Linux.Namespaces = append(s.Linux.Namespaces, ociNamespace{Type: ns})
	}
	r := &s.Linux.Resources
	r.Memory.Limit, r.Memory.Swap = 256<<20, 256<<20 // swap is memory+swap (memsw) in OCI
	r.CPU.Quota, r.CPU.Period = 100000, 100000
	r.Pids.Limit = 64
	return s
}

// writeBundle writes config.json and a rootfs of mount points and the
// merged-/usr links.
func (c *crunPeer) writeBundle() error {
	root := filepath.Join(c.dir, "rootfs")
	for _, d := range []string{"usr", "etc", "proc", "dev", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	for _, l := range []string{"bin", "sbin", "lib", "lib64"} {
		if t, err := os.Readlink("/" + l); err == nil {
			if err := os.Symlink(t, filepath.Join(root, l)); err != nil {
				return err
			}
		}
	}
	b, err := json.MarshalIndent(c.crunSpec(), "", "\t")
	if err != nil {
		return fmt.Errorf("encode crun's config.json: %w", err)
	}
	return os.WriteFile(filepath.Join(c.dir, "config.json"), b, 0o644)
}
