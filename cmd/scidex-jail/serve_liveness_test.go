package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServeBadSlotFlags: slot settings that `run` refuses end serve at its
// start with run's message and exit 125, where the server used to start
// and warn (uid 0: every run cold) or fail every slot.
func TestServeBadSlotFlags(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name  string
		flags []string
		want  string // in both run's and serve's message
	}{
		{"host root", []string{"--uid", "0", "--gid", "0"}, "host uid/gid 0:0 must be non-zero"},
		{"missing cgroup parent", []string{"--cgroup-parent", "/does/not/exist"}, "/does/not/exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := tmpRoot(t)
			r := runJail(t, runOpts{}, append(append([]string{"run", "--id", "badslot", "--tmp-root", root}, c.flags...), "--", "/usr/bin/true")...)
			if r.code != 125 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("run %v = exit %d, stderr %q; want 125 and %q", c.flags, r.code, r.stderr, c.want)
			}
			cmd := exec.Command(jailBin, append([]string{"serve", "--socket", root + "/s.sock"}, c.flags...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
				done <- err
			case <-time.After(20 * time.Second):
				t.Fatalf("serve %v still runs after 20 s, want exit 125 at its start; stderr: %s", c.flags, &stderr)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("serve %v = %v, stderr %q; want exit 125 and %q", c.flags, err, &stderr, c.want)
			}
			if left := entries(t, root); len(left) != 0 {
				t.Errorf("serve %v left %v in its tmp-root, want nothing (no socket)", c.flags, left)
			}
		})
	}
}
