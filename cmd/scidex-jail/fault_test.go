package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cmd/scidex-jail/internal/earlysig"
	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// signalsHandled reports whether the Go program pid has registered its
// signal.Notify handlers: os/signal then runs one thread that blocks every
// signal but the registered ones (runtime ensureSigM), so a thread with
// SIGALRM blocked and none of earlysig.Signals is the mark. Before that, a SIGTERM
// kills a Go program by the default action; no Go code can run earlier
// than the package init that registers them.
func signalsHandled(pid int) bool {
	// Notify enables them one at a time: all must be in.
	var handled uint64
	for _, s := range earlysig.Signals {
		handled |= 1 << (s.(syscall.Signal) - 1)
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, tk := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, tk.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			v, ok := strings.CutPrefix(line, "SigBlk:\t")
			if !ok {
				continue
			}
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err == nil && m&(1<<(syscall.SIGALRM-1)) != 0 && m&handled == 0 {
				return true
			}
		}
	}
	return false
}

// waitSignalsHandled waits until the jail pid handles its signals.
func waitSignalsHandled(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !signalsHandled(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("jail %d did not register its signal handlers within 10 s", pid)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// processesOfBinary lists the processes running the test's jail binary or
// its init (beside it): supervisors and inits alike.
func processesOfBinary() []string {
	var pids []string
	ds, _ := os.ReadDir("/proc")
	for _, d := range ds {
		if exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe")); err == nil && (exe == jailBin || exe == testutil.InitBeside(jailBin)) {
			pids = append(pids, d.Name())
		}
	}
	return pids
}

func waitNoJail(t *testing.T, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesOfBinary()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: jail processes still alive after 5 s: %v", what, left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCancelBeforeInit: SIGTERM, SIGINT or SIGHUP while the jail is still
// reading its profiles file, long before it parses the rest of its flags
// or makes anything: a cancelled report, exit 128+n, nothing made. The
// moment is made exact with fanotify: the jail's open of the profiles file
// waits for the test's permission, and the signal comes meanwhile.
func TestCancelBeforeInit(t *testing.T) {
	requireRoot(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(jailSigName(sig), func(t *testing.T) {
			root := tmpRoot(t)
			cfg := filepath.Join(t.TempDir(), "profiles.json")
			os.WriteFile(cfg, []byte(`{"profiles": {}}`), 0o644)
			fan := openGate(t, cfg)
			id := runID(t, "early")
			cmd, rep, out, errb := jailCmd(t, runOpts{}, "run", "--id", id, "--tmp-root", root, "--config", cfg, "--", "/bin/sleep", marker(t))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ev := fan.wait(t, cmd.Process.Pid)
			cmd.Process.Signal(sig)
			time.Sleep(20 * time.Millisecond) // let a default action act, if it will
			fan.allow(ev)
			r := finishJail(t, cmd, cmd.Wait(), rep, out, errb)
			wantStatus(t, r, report.StatusCancelled, 128+int(sig))
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("tmp-root after an early cancel holds %v, want nothing", got)
			}
			// Not the report's warnings: they may name leftovers of
			// other runs this run swept.
			wantNoLeaf(t, id, result{})
		})
	}
}

// gate holds opens of one file until the test allows them (fanotify
// permission events).
type gate struct{ fd int }

func openGate(t *testing.T, path string) gate {
	t.Helper()
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		t.Fatalf("fanotify_init: %v (needs CAP_SYS_ADMIN and CONFIG_FANOTIFY_ACCESS_PERMISSIONS)", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN_PERM, unix.AT_FDCWD, path); err != nil {
		t.Fatalf("fanotify_mark %s: %v", path, err)
	}
	return gate{fd}
}

// wait returns the event of pid opening the file; opens by others are let
// through.
func (g gate) wait(t *testing.T, pid int) unix.FanotifyEventMetadata {
	t.Helper()
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(g.fd, buf)
		if err != nil {
			t.Fatalf("read fanotify: %v", err)
		}
		for off := 0; off+int(unsafe.Sizeof(unix.FanotifyEventMetadata{})) <= n; {
			ev := *(*unix.FanotifyEventMetadata)(unsafe.Pointer(&buf[off]))
			off += int(ev.Event_len)
			if int(ev.Pid) == pid {
				return ev
			}
			g.allow(ev)
		}
	}
}

func (g gate) allow(ev unix.FanotifyEventMetadata) {
	resp := unix.FanotifyResponse{Fd: ev.Fd, Response: unix.FAN_ALLOW}
	unix.Write(g.fd, (*[unsafe.Sizeof(resp)]byte)(unsafe.Pointer(&resp))[:])
	unix.Close(int(ev.Fd))
}

// TestFaultInjection kills the jail with SIGKILL, and cancels it with
// SIGTERM, at seeded random moments of the first 20 ms of a run (for
// SIGTERM, from the moment the jail handles signals: before that only the
// kernel and the Go runtime run). After each: no process left, and once
// gc (or the next run) has swept, no run directory, no half-made one and
// no temporary report; every SIGTERM gives a cancelled report. cgroup
// leaves may only be swept 2 s after they were made (a live jail's margin
// to lock a new leaf), so they are checked once, after the last trial.
func TestFaultInjection(t *testing.T) {
	requireRoot(t)
	seed, rng := faultRand(14)
	const trials = 50
	root := tmpRoot(t)
	reports := t.TempDir()
	collects := t.TempDir()
	prefix := fmt.Sprintf("fault%d", os.Getpid())
	var beforeStart, swept int // what the sweep covered, for the log
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		for i := 0; i < trials; i++ {
			delay := time.Duration(rng.Int63n(int64(20 * time.Millisecond)))
			id := fmt.Sprintf("%s-%d-%d", prefix, sig, i)
			what := fmt.Sprintf("seed %d, %s after %s (trial %s)", seed, jailSigName(sig), delay, id)
			report := filepath.Join(reports, id+".json")
			args := []string{"run", "--id", id, "--tmp-root", root, "--report", report, "--collect", filepath.Join(collects, id)}
			if i%2 == 1 {
				args = append(args, "--disk", "0")
			}
			m := fmt.Sprintf("0.005%09d", rng.Int63n(1e9))
			if sig == syscall.SIGTERM {
				m = marker(t)
			}
			args = append(args, "--", "/bin/sh", "-c", "echo x > out.txt; echo y > out2.txt; sleep "+m)
			cmd := exec.Command(jailBin, args...)
			var errb strings.Builder
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if sig == syscall.SIGTERM {
				waitSignalsHandled(t, cmd.Process.Pid)
			}
			time.Sleep(delay)
			cmd.Process.Signal(sig)
			cmd.Wait()
			code := cmd.ProcessState.ExitCode()

			waitGone(t, m, 5*time.Second)
			waitNoJail(t, what)
			if sig == syscall.SIGTERM {
				b, err := os.ReadFile(report)
				if err != nil {
					t.Fatalf("%s: no report (exit %d, %v): %v; stderr %s", what, code, cmd.ProcessState, err, errb.String())
				}
				if strings.Contains(string(b), "before the analysis started") {
					beforeStart++
				}
				if !strings.Contains(string(b), `"status": "cancelled"`) || code != 128+15 {
					t.Errorf("%s: exit %d, report %s; want cancelled, exit 143", what, code, b)
				}
				if left := leavesOf(t, id); len(left) != 0 {
					t.Errorf("%s: cgroup leaves left by a jail that survived: %v", what, left)
				}
			}
			swept += strings.Count(gc(t, "--tmp-root", root, "--report-dir", reports), "removed ")
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("%s: after gc the tmp-root holds %v, want nothing", what, got)
			}
			for _, e := range entries(t, reports) {
				if !strings.HasSuffix(e, ".json") || strings.HasPrefix(e, ".") {
					t.Errorf("%s: after gc the report directory holds %s, want only reports", what, e)
				}
			}
		}
	}
	t.Logf("seed %d: %d of %d SIGTERMs cancelled before the analysis started; gc removed %d leftovers of killed jails", seed, beforeStart, trials, swept)
	// Leaves of the killed jails: empty and unlocked once their init died;
	// gc may take them once older than 2 s.
	time.Sleep(2500 * time.Millisecond)
	gc(t, "--tmp-root", root)
	if left := leavesOf(t, prefix); len(left) != 0 {
		t.Errorf("cgroup leaves of the killed jails left after gc: %v", left)
	}
}

// faultRand is a fault test's seed and random source: seed, or
// SCIDEX_FAULT_SEED to replay another run's moments.
func faultRand(seed int64) (int64, *rand.Rand) {
	if s := os.Getenv("SCIDEX_FAULT_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	return seed, rand.New(rand.NewSource(seed))
}
