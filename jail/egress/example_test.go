package egress_test

import (
	"context"
	"fmt"
	"net"

	"github.com/scidex/scidex-jail/jail/egress"
)

// The supervisor's side of a run in the egress mode: the sockets here
// stand for those the init makes in the run's namespace and hands over.
func Example() {
	policy, err := egress.Parse([]string{"eutils.ncbi.nlm.nih.gov", "*.uniprot.org"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	eng, err := egress.New(egress.Config{Policy: policy})
	if err != nil {
		fmt.Println(err)
		return
	}
	dns, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := eng.Serve(context.Background(), egress.Sockets{DNS: dns}); err != nil {
		fmt.Println(err)
		return
	}
	// ... the run ...
	log := eng.Stop()
	fmt.Printf("ports %v, %d lookups, notes %q\n", policy.Ports(), log.Totals.Lookups, log.Summary())
	// Output: ports [443], 0 lookups, notes ""
}

func ExampleParse() {
	_, err := egress.Parse([]string{"*"}, nil)
	fmt.Println(err)
	_, err = egress.Parse([]string{"db.example.org:5432"}, nil)
	fmt.Println(err)
	// Output:
	// host entry "*": a bare * would allow every host; name hosts, or a domain's subdomains as *.example.org
	// host entry "db.example.org:5432": port 5432 is PostgreSQL's, which can never be opened to an analysis
}
