package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/childmode"
	"github.com/scidex/scidex-jail/jail/hostcheck"
)

// TestChildModes: each program takes its child mode from its argv[0]
// alone: the init program, started by hand, refuses to be anything (exit
// 125, nothing done); scidex-jail started as the probe skips its command
// line and reports what it was asked to apply (nothing here) as JSON.
func TestChildModes(t *testing.T) {
	initProg := exec.Command(testutil.InitBeside(jailBin))
	out, err := initProg.CombinedOutput()
	if code := initProg.ProcessState.ExitCode(); code != 125 || !strings.Contains(string(out), "internal init") {
		t.Errorf("init program by hand: exit %d (%v), %q; want 125 and a message naming the internal init", code, err, out)
	}

	probe := &exec.Cmd{Path: jailBin, Args: childmode.Probe.Argv("--help"), Stdin: strings.NewReader("{}")}
	out, err = probe.Output()
	var sec hostcheck.Security
	if err != nil || json.Unmarshal(out, &sec) != nil {
		t.Errorf("scidex-jail as %s: %v, %q; want the probe's JSON findings", childmode.Probe, err, out)
	}
}
