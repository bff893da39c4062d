package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/request"
)

// procName is pid's comm (what ps shows) and its argv.
func procName(t *testing.T, pid int) (comm string, argv []string) {
	t.Helper()
	c, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		t.Fatalf("comm of %d: %v", pid, err)
	}
	a, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(string(c)), strings.Split(strings.TrimSuffix(string(a), "\x00"), "\x00")
}

func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("stat of %d: %v", pid, err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, 0x29)+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// TestInitNames: in ps a served slot's init is sj-slot (argv
// "scidex-jail-init slot"), a run's init sj-init, served or cold, where
// the exec by /proc/self/fd/4 named them "4"; the analysis keeps its own
// comm and argv.
func TestInitNames(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	pid := c.cmd.Process.Pid
	waitFor(t, func() bool { return len(childrenOf(t, pid)) == 1 }, "the slot's init")
	kids := childrenOf(t, pid)
	slot, _ := strconv.Atoi(kids[0])
	// Its name is set as its first act; its hello comes after.
	waitFor(t, func() bool { comm, _ := procName(t, slot); return comm != "4" }, "the slot's init to name itself")
	if comm, argv := procName(t, slot); comm != "sj-slot" || strings.Join(argv, " ") != "scidex-jail-init slot" {
		t.Errorf("slot's init: comm %q, argv %q; want sj-slot, [scidex-jail-init slot]", comm, argv)
	}
	// The run's init and the analysis, served (from the slot) and cold.
	cases := []struct {
		name  string
		start func(m string) func()
	}{
		{"served", func(m string) func() {
			c.send(runReq("s", request.Request{ID: "names-served", Cwd: root, TmpRoot: root}, "/bin/sleep", m))
			return func() { c.await("s") }
		}},
		{"cold", func(m string) func() {
			cmd := exec.Command(jailBin, "run", "--id", "names-cold", "--tmp-root", root, "--", "/bin/sleep", m)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			return func() { cmd.Wait() }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := marker(t)
			wait := tc.start(m)
			// The sleep: the process m is in whose argv[0] is /bin/sleep
			// (the cold jail's command line holds m too).
			sleep := 0
			waitFor(t, func() bool {
				for _, p := range testutil.ProcessesWith(m) {
					if _, argv := procName(t, p); argv[0] == "/bin/sleep" {
						sleep = p
					}
				}
				return sleep != 0
			}, "the sleep")
			if comm, argv := procName(t, sleep); comm != "sleep" || strings.Join(argv, " ") != "/bin/sleep "+m {
				t.Errorf("analysis: comm %q, argv %q; want sleep, [/bin/sleep %s]", comm, argv, m)
			}
			if comm, argv := procName(t, parentOf(t, sleep)); comm != "sj-init" || argv[0] != "scidex-jail-init" {
				t.Errorf("the run's init: comm %q, argv %q; want sj-init, argv[0] scidex-jail-init", comm, argv)
			}
			syscall.Kill(sleep, syscall.SIGKILL)
			wait()
		})
	}
}
