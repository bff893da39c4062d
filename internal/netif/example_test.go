package netif_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/internal/netif"
)

// The init's step in a run's new network namespace. It needs
// CAP_NET_ADMIN there, so it is compiled, not run.
func ExampleLoopbackUp() {
	if err := netif.LoopbackUp(); err != nil {
		fmt.Fprintln(os.Stderr, err) // "bring lo up: operation not permitted"
	}
}
