package sysnum_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/seccomp/internal/sysnum"
)

// The numbers of another architecture, from the x/sys go.mod pins. It
// runs the go command to find the module, so it is compiled, not run.
func ExampleRead() {
	nums, err := sysnum.Read("arm64") // {"read": 63, "write": 64, ...}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(nums["read"], nums["write"])
}
