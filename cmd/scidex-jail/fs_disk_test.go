package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
)

// fsFillScript writes a small output first, then 64 KiB chunks until a
// write fails, and reports the errno and what it saw of its directory. It
// gives up after 96 MiB so that a broken budget cannot fill the host's disk,
// yet would show far above the noise of other writers (see below).
const fsFillScript = `
import json, os, sys
with open('small.txt', 'w') as f:
    f.write('small output\n')
fstype = ''
for line in open('/proc/self/mountinfo'):
    parts = line.split()
    if parts[4] == os.getcwd():
        fstype = line.split(' - ')[1].split()[0]
st = os.statvfs('.')
out = {'errno': 0, 'written': 0, 'fstype': fstype, 'size': st.f_blocks * st.f_frsize}
fd = os.open('big.bin', os.O_WRONLY | os.O_CREAT, 0o644)
try:
    while out['written'] < 96 << 20:
        out['written'] += os.write(fd, b'\0' * 65536)
except OSError as e:
    out['errno'] = e.errno
os.close(fd)
print(json.dumps(out), flush=True)
sys.exit(1 if out['errno'] else 0)
`

type fsFill struct {
	Errno   int    `json:"errno"`
	Written int64  `json:"written"`
	FSType  string `json:"fstype"`
	Size    int64  `json:"size"`
}

// TestFSDiskBudget fills a 1 MiB run directory: the write fails with
// ENOSPC, the report says disk_limit, and what was written within the
// budget is listed and collected. The budget is a tmpfs, so the host's disk
// does not pay for it.
func TestFSDiskBudget(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	collect := filepath.Join(t.TempDir(), "collected")
	before := fsFree(t, root)
	r := runJail(t, runOpts{}, "run", "--id", "fsdisk", "--tmp-root", root, "--disk", "1M", "--collect", collect,
		"--", "/usr/bin/python3", "-c", fsFillScript)
	after := fsFree(t, root)
	wantStatus(t, r, report.StatusDiskLimit, 1)

	var got fsFill
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &got); err != nil {
		t.Fatalf("fill script output %q: %v; %v", r.stdout, err, r)
	}
	const mib = 1 << 20
	t.Logf("inside: %+v; report disk_used_bytes %d; host free space %d -> %d", got, r.report.DiskUsedBytes, before, after)
	if got.Errno != int(syscall.ENOSPC) {
		t.Errorf("write past the budget: errno = %d, want %d (ENOSPC)", got.Errno, syscall.ENOSPC)
	}
	if got.FSType != "tmpfs" || got.Size != mib {
		t.Errorf("run directory inside = %s of %d bytes, want tmpfs of %d", got.FSType, got.Size, mib)
	}
	// The small file and the filesystem's own blocks take a few pages.
	if got.Written < mib-64<<10 || got.Written > mib {
		t.Errorf("bytes written before ENOSPC = %d, want about %d", got.Written, mib)
	}
	if u := r.report.DiskUsedBytes; u < mib-16<<10 || u > mib {
		t.Errorf("report disk_used_bytes = %d, want within 16 KiB below %d", u, mib)
	}
	if r.report.Limits.Values.Int(limits.Disk) != mib {
		t.Errorf("report limits.disk_bytes = %d, want %d", r.report.Limits.Values.Int(limits.Disk), mib)
	}

	small := "small output\n"
	sum := sha256.Sum256([]byte(small))
	want := map[string]report.Output{
		"small.txt": {Path: "small.txt", Type: "file", Size: int64(len(small)), SHA256: hex.EncodeToString(sum[:])},
		"big.bin":   {Path: "big.bin", Type: "file", Size: got.Written},
	}
	for _, o := range r.report.Outputs {
		w, ok := want[o.Path]
		if !ok {
			t.Errorf("report output %+v, want only %v", o, want)
			continue
		}
		delete(want, o.Path)
		if o.Type != w.Type || o.Size != w.Size || (w.SHA256 != "" && o.SHA256 != w.SHA256) {
			t.Errorf("report output %s = %+v, want %+v", o.Path, o, w)
		}
	}
	for p := range want {
		t.Errorf("report outputs %+v lack %s", r.report.Outputs, p)
	}
	if r.report.CollectedTo != collect {
		t.Errorf("report collected_to = %q, want %q", r.report.CollectedTo, collect)
	}
	if b, err := os.ReadFile(filepath.Join(collect, "small.txt")); err != nil || string(b) != small {
		t.Errorf("collected small.txt = %q, %v, want %q", b, err, small)
	}
	if fi, err := os.Stat(filepath.Join(collect, "big.bin")); err != nil || fi.Size() != got.Written {
		t.Errorf("collected big.bin: %v, %v, want %d bytes", fi, err, got.Written)
	}
	if names := entries(t, root); len(names) != 0 {
		t.Errorf("tmp-root after the run holds %v, want nothing", names)
	}
	// A broken budget would write 96 MiB to the host's disk. Other
	// processes (go test links test binaries in parallel on the same disk)
	// write too: 48 MiB is the margin for that noise. The deterministic
	// proof is the tmpfs of 1 MiB seen inside, checked above.
	if drop := before - after; drop > 48*mib {
		t.Errorf("free space on the host's filesystem of %s dropped by %d bytes during the run, want the budget on a tmpfs", root, drop)
	}
}

// fsFree is the free space of the filesystem holding path.
func fsFree(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatalf("statfs %s: %v", path, err)
	}
	return int64(st.Bavail) * st.Bsize
}

// TestFSNoDiskBudget: with --disk 0 the run directory is the host directory
// itself, so what the analysis writes is there on the host (kept here).
func TestFSNoDiskBudget(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "fsnodisk", "--tmp-root", root, "--disk", "0", "--keep",
		"--", "/bin/sh", "-c", "echo on-the-host > result.txt")
	wantStatus(t, r, report.StatusOK, 0)
	dir := filepath.Join(root, "scidex-analysis-fsnodisk")
	b, err := os.ReadFile(filepath.Join(dir, "result.txt"))
	if err != nil || string(b) != "on-the-host\n" {
		t.Errorf("host %s/result.txt = %q, %v, want %q", dir, b, err, "on-the-host\n")
	}
	if !strings.Contains(r.report.Enforced.Mounts.RunDir, "bound from the host") {
		t.Errorf("report mounts.run_dir = %q, want it bound from the host", r.report.Enforced.Mounts.RunDir)
	}
	if r.report.Limits.Values.Int(limits.Disk) != 0 || r.report.DiskUsedBytes != 0 {
		t.Errorf("report disk_bytes, disk_used_bytes = %d, %d, want 0, 0", r.report.Limits.Values.Int(limits.Disk), r.report.DiskUsedBytes)
	}
}

// TestFSNumpy: Debian's python3 imports numpy (OpenBLAS and its threads
// under the cgroup limits, no RLIMIT_AS) and computes.
func TestFSNumpy(t *testing.T) {
	requireRoot(t)
	const script = `import numpy as np
a = np.arange(12, dtype=float).reshape(3, 4)
print(int((a @ a.T).trace()), np.linalg.solve(np.array([[2., 0.], [0., 4.]]), np.array([2., 8.])).tolist())`
	r := runJail(t, runOpts{}, "run", "--id", "fsnumpy", "--tmp-root", tmpRoot(t), "--", "/usr/bin/python3", "-c", script)
	wantStatus(t, r, report.StatusOK, 0)
	// trace(A A^T) is the sum of squares of 0..11.
	if want := "506 [1.0, 2.0]\n"; r.stdout != want {
		t.Errorf("numpy in the jail printed %q, want %q; %v", r.stdout, want, r)
	}
}
