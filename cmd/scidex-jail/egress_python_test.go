package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// egressServerPy runs one analysis in the egress mode through
// scidex_jail.Server (which starts `scidex-jail serve` as its child, in
// the test internet too) with the Python keywords, and prints what the
// analysis printed and the typed report's egress.
const egressServerPy = `
import json, sys
import scidex_jail
binary, tmp, ca, allowed, refused, cidr = sys.argv[1:7]
probe = sys.argv[7:]
with scidex_jail.Server(binary=binary, tmp_root=tmp) as server:
    r = server.run(probe, analysis_id="py-egress", net="egress", allow_hosts=[allowed], allow_ranges=[cidr],
                   ro=[ca], env={"LAB_CA": ca}, stdout=scidex_jail.CAPTURE)
e = r.report.egress
print(json.dumps({"status": r.report.status, "stdout": r.stdout, "notes": r.report.completion_notes,
                  "hosts": list(e.hosts), "allowed": e.totals.allowed, "refused_lookups": e.totals.lookups_refused,
                  "connections": [[c.name, c.port, c.decision, c.via] for c in e.connections]}))
`

// TestEgressPythonServer: the egress mode through scidex_jail.Server,
// its allow_hosts and allow_ranges keywords, and Report.egress typed.
func TestEgressPythonServer(t *testing.T) {
	requireRoot(t)
	lab := testutil.NewLab(t)
	ca := labCA(t, lab)
	probes := []egressProbe{
		{"allowed", fmt.Sprintf("proxied('https://%s/')", testutil.LabWeb), "ok hello from " + testutil.LabWeb},
		{"refused", fmt.Sprintf("direct('https://%s/')", testutil.LabEvil), "Temporary failure in name resolution"},
	}
	// The package's directory: the checkout's, or in the VM harness, where
	// a checkout under /tmp is not seen (the VM's /tmp is its own), the
	// copy .ci/vmtests hands in with SCIDEX_PYTHON_PKG.
	pkg, err := filepath.Abs("../../python")
	if err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("SCIDEX_PYTHON_PKG"); p != "" {
		pkg = filepath.Dir(p)
	}
	args := append([]string{"-c", egressServerPy, jailBin, tmpRoot(t), ca, testutil.LabWeb, testutil.LabEvil, testutil.LabPublic.String()}, egressArgv(t, probes)...)
	cmd := exec.Command("/usr/bin/python3", args...)
	cmd.Env = []string{"PYTHONPATH=" + pkg, "PATH=/usr/bin:/bin"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := lab.Net.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("python: %v\n%s%s", err, out.String(), errb.String())
	}
	var got struct {
		Status, Stdout, Notes string
		Hosts                 []string
		Allowed               int
		RefusedLookups        int `json:"refused_lookups"`
		Connections           [][]any
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("python printed %q: %v (stderr %s)", out.String(), err, errb.String())
	}
	res := probeResults(t, result{stdout: got.Stdout})
	for _, p := range probes {
		if !strings.Contains(res[p.name], p.want) {
			t.Errorf("probe %s = %q, want it to hold %q", p.name, res[p.name], p.want)
		}
	}
	if got.Status != "ok" || len(got.Hosts) != 1 || got.Allowed != 1 || got.RefusedLookups == 0 || !strings.Contains(got.Notes, testutil.LabEvil) {
		t.Errorf("through scidex_jail.Server: %+v; want ok, the one host, its connection allowed and the refused lookup named", got)
	}
}
