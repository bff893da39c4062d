package limits_test

import (
	"fmt"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/option"
)

func Example() {
	a, _ := limits.CPUQuota.Parse("0.5")
	fmt.Println(a.Float())
	_, err := limits.PIDs.Parse("0")
	fmt.Println("--pids:", err)
	err = limits.PIDs.Check(limits.Int(int64(99999999999)))
	fmt.Println(option.FromProfile("gpu", option.Flag).Name(limits.PIDs), err)
	// Output:
	// 0.5
	// --pids: 0 processes is refused: give a limit such as 512, or write none for no limit
	// profiles.gpu.pids 99999999999 is above the kernel's limit of 4194304 processes: give e.g. 512, or none for no limit
}
