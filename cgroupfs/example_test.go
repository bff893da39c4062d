package cgroupfs_test

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/scidex/scidex-jail/cgroupfs"
)

// A leaf with its limits written before the child runs in it: born there
// on v2 (CLONE_INTO_CGROUP), moved in before its go-ahead on v1. It needs
// a cgroup the caller may write, so it is compiled, not run.
func ExampleCreate() {
	leaf, err := cgroupfs.Create(cgroupfs.Config{
		Name:   "scidex-" + "SDA-1",
		Limits: cgroupfs.Limits{cgroupfs.MemoryKey: {N: 2 << 30}, cgroupfs.CPUsKey: {CPUs: 1}, cgroupfs.PIDsKey: {N: 256}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cgroup leaf:", err) // errors.Is(err, cgroupfs.ErrUnsupported): what was found, the fix
		return
	}
	defer leaf.Remove() // kills whatever is left, waits, removes the leaf
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if fd, ok := leaf.FD(); ok {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		err = cmd.Start()
	} else {
		err = cmd.Start() // a real child waits for a go-ahead ...
		if err == nil {
			err = leaf.AddProcess(cmd.Process.Pid) // ... given after this
		}
	}
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	usage, err := leaf.Usage() // after the child ended: its peak, OOM kills, CPU time
	fmt.Println(usage, err)
}

// A run that sweeps before it creates reads the host once for both.
func ExampleHost_RemoveStale() {
	cfg := cgroupfs.Config{Name: "scidex-SDA-1", Limits: cgroupfs.Limits{cgroupfs.PIDsKey: {N: 256}}}
	h, err := cgroupfs.ReadHost()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	gone, err := h.RemoveStale(cfg, "scidex-", 2*time.Second) // a warning, not fatal
	fmt.Println(gone, err)
	leaf, err := h.Create(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer leaf.Remove()
}
