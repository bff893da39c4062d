package promise_test

import (
	"errors"
	"fmt"

	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/promise"
)

// A host without Landlock: the filesystem promises lose a layer, and a run
// is refused until that layer is given up by name. The output is the
// values, not the messages, which name the command line's words.
func Example() {
	none, _ := netmode.Lookup("none") // the network mode's row gives the network's promises their layers
	host := promise.HostLayers{LandlockABI: 0, LandlockErr: "landlock is not in the lsm= boot parameter", Net: none.Network()}
	states := promise.EvaluatePromises(host, nil) // nil: the default required layers

	_, err := promise.Check(states, nil)
	var pe *promise.PromiseError // the promise, the missing layer and the fix
	if errors.As(err, &pe) {
		fmt.Println("refused:", pe.State.Promise, "missing", pe.State.Missing[0].Layer)
	}

	ins, err := promise.ParseOptIns(promise.OptInDegrade, []string{"landlock"}) // allow_degraded: landlock
	if err != nil {
		fmt.Println(err)
		return
	}
	degraded, err := promise.Check(states, ins)
	for _, s := range degraded {
		fmt.Println("degraded:", s.Promise, s.Held)
	}
	fmt.Println(err, promise.Report(states)[promise.PromiseFSWrite]) // the report's enforced.promises.fs_write
	// Output:
	// refused: fs_write missing landlock fs
	// degraded: fs_write [mount view]
	// degraded: fs_read [mount view]
	// <nil> [mount view]
}
