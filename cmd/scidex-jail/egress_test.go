package main

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestEgressSmoke: an allowed name, fetched by urllib through the proxy.
func TestEgressSmoke(t *testing.T) {
	requireRoot(t)
	lab := testutil.NewLab(t)
	ca := labCA(t, lab)
	probes := []egressProbe{
		{"urllib proxied", fmt.Sprintf("proxied('https://%s/')", testutil.LabWeb), "ok hello from " + testutil.LabWeb},
		{"urllib direct", fmt.Sprintf("direct('https://%s/')", testutil.LabWeb), "ok hello from " + testutil.LabWeb},
	}
	r := runInLab(t, lab, append([]string{"run", "--id", "egress-smoke", "--tmp-root", tmpRoot(t), "--net", "egress",
		"--allow-host", testutil.LabWeb, "--allow-range", testutil.LabPublic.String(), "--ro", ca, "--env", "LAB_CA=" + ca, "--"},
		egressArgv(t, probes)...)...)
	wantStatus(t, r, report.StatusOK, 0)
	got := probeResults(t, r)
	for _, p := range probes {
		if !strings.HasPrefix(got[p.name], p.want) {
			t.Errorf("probe %s = %q, want %q...", p.name, got[p.name], p.want)
		}
	}
	t.Logf("%+v\n%s", r.report.Egress, r.report.CompletionNotes)
	_ = netip.Addr{}
}
