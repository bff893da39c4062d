package main

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestEgressKilledMidDownload: a run ended during a download, by a cancel
// (SIGTERM: the report is written) or by the supervisor's death (SIGKILL:
// none can be), leaves nothing: no process of the run, no connection of
// the supervisor's open in the test internet; after the cancel, the
// report has the download with what it relayed (ended by the analysis'
// own end, or cut by the run's if the engine stopped first).
func TestEgressKilledMidDownload(t *testing.T) {
	requireRoot(t)
	lab := testutil.NewLab(t)
	bytesAP := netip.AddrPortFrom(testutil.LabWebAddr, testutil.LabBytes)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			mark := marker(t)
			before := lab.Accepted(bytesAP)
			probes := []egressProbe{{"endless " + mark, fmt.Sprintf("get('%s', %d, 1 << 40)", testutil.LabWeb, testutil.LabBytes), ""}}
			args := append(egressArgs(t, lab, "egress-kill", fmt.Sprintf("%s:%d", testutil.LabWeb, testutil.LabBytes)), "--egress-download", "none", "--")
			cmd, rep, out, errb := jailCmd(t, runOpts{}, append(args, egressArgv(t, probes)...)...)
			if err := lab.Net.Start(cmd); err != nil {
				t.Fatalf("start scidex-jail in the test internet: %v", err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			// Until the download is under way; a run that ends first failed.
			for lab.Accepted(bytesAP) == before || established(t, lab, testutil.LabBytes) == 0 {
				select {
				case err := <-waited:
					t.Fatalf("the run ended (%v) before its download began; stderr: %s", err, errb)
				case <-time.After(10 * time.Millisecond):
				}
			}
			cmd.Process.Signal(sig)
			r := finishJail(t, cmd, <-waited, rep, out, errb)
			waitGone(t, mark, 10*time.Second)
			deadline := time.Now().Add(10 * time.Second)
			for established(t, lab, testutil.LabBytes) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("a connection to the lab's port %d is still open after the run", testutil.LabBytes)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if sig != syscall.SIGTERM {
				return
			}
			wantStatus(t, r, report.StatusCancelled, 143)
			c := conns(r.report.Egress, testutil.LabWeb, testutil.LabBytes)
			if len(c) != 1 || c[0].BytesDown == 0 || (c[0].Decision != "allowed" && c[0].Reason != "run_ended") {
				t.Errorf("egress connections = %+v, want the download with its bytes, ended with the analysis or the run", c)
			}
		})
	}
}

// established counts the TCP connections of the test internet's own
// side on port (its servers' end) that are established.
func established(t *testing.T, lab *testutil.Lab, port int) int {
	t.Helper()
	n := 0
	err := lab.Net.Do(func() error {
		// thread-self: the namespace's thread's view of the network.
		f, err := os.Open("/proc/thread-self/net/tcp")
		if err != nil {
			return err
		}
		defer f.Close()
		local := fmt.Sprintf(":%04X ", port)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 3 && strings.HasSuffix(fields[1]+" ", local) && fields[3] == "01" {
				n++
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatalf("read the test internet's connections: %v", err)
	}
	return n
}
