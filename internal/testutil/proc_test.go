package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestProcessesWith: a process started with a unique argument is found by
// it (also across arguments, joined by a space), and this one never is.
func TestProcessesWith(t *testing.T) {
	marker := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1e9)
	cmd := exec.Command("sleep", marker)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sleep: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for _, m := range []string{marker, "sleep " + marker} {
		if got := ProcessesWith(m); !slices.Equal(got, []int{cmd.Process.Pid}) {
			t.Errorf("ProcessesWith(%q) = %v, want [%d]", m, got, cmd.Process.Pid)
		}
	}
	if got := ProcessesWith(os.Args[0]); slices.Contains(got, os.Getpid()) {
		t.Errorf("ProcessesWith(%q) = %v, want this process (%d) left out", os.Args[0], got, os.Getpid())
	}
}
