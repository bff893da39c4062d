package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestEgressRootless: the egress mode as a useradd'ed account (through
// su, as a researcher runs it; no delegated cgroup, so that layer is off
// by name): the init still makes the stub's socket on port 53 in the
// run's own namespace, an allowed name is fetched and a refused one is
// recorded.
func TestEgressRootless(t *testing.T) {
	requireRoot(t)
	lab := testutil.NewLab(t)
	a := newAccount(t)
	tmp := a.tmpRootFor(t)
	rep := filepath.Join(tmp, "report.json")
	ca := labCA(t, lab)
	probes := []egressProbe{
		{"allowed", fmt.Sprintf("proxied('https://%s/')", testutil.LabWeb), "ok hello from " + testutil.LabWeb},
		{"refused", fmt.Sprintf("direct('https://%s/')", testutil.LabEvil), "Temporary failure in name resolution"},
	}
	args := append([]string{jailBin, "run", "--id", "egress-rootless", "--tmp-root", tmp, "--report", rep, "--unsafe-disable", "cgroup",
		"--net", "egress", "--allow-host", testutil.LabWeb, "--allow-range", testutil.LabPublic.String(), "--ro", ca, "--env", "LAB_CA=" + ca, "--"},
		egressArgv(t, probes)...)
	q := make([]string, len(args))
	for i, s := range args {
		q[i] = shellQuote(s)
	}
	cmd := a.su(strings.Join(q, " "))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := lab.Net.Start(cmd); err != nil {
		t.Fatalf("start su in the test internet: %v", err)
	}
	r := finishJail(t, cmd, cmd.Wait(), rep, &out, &errb)
	wantStatus(t, r, report.StatusOK, 0)
	if r.report.Enforced.HostUID != a.UID {
		t.Errorf("enforced host uid = %d, want the account's %d (rootless)", r.report.Enforced.HostUID, a.UID)
	}
	got := probeResults(t, r)
	for _, p := range probes {
		if !strings.Contains(got[p.name], p.want) {
			t.Errorf("probe %s = %q, want it to hold %q", p.name, got[p.name], p.want)
		}
	}
	if !strings.Contains(r.report.CompletionNotes, "refused lookups of 1 name not in the profile: "+testutil.LabEvil) {
		t.Errorf("completion notes = %q, want the refused lookup named", r.report.CompletionNotes)
	}
}
