package netmode

import (
	"slices"
	"strconv"
	"testing"

	"github.com/scidex/scidex-jail/jail/egress"
)

// TestEgressInit: what the egress row's hook asks of the init and the
// view: the stub, a listener per allowed port, the proxy on 3128 or the
// next port no host takes (a listener on 0.0.0.0:<port> holds it on
// 127.0.0.1 too), its address in both proxy variables, the stub in
// resolv.conf.
func TestEgressInit(t *testing.T) {
	for _, c := range []struct {
		hosts []string
		ports []uint16
		proxy uint16
	}{
		{nil, nil, 3128},
		{[]string{"a.example.org"}, []uint16{443}, 3128},
		{[]string{"a.example.org", "b.example.org:80", "*.c.example.org:443"}, []uint16{80, 443}, 3128},
		{[]string{"a.example.org:3128"}, []uint16{3128}, 3129},
		{[]string{"a.example.org:3128", "a.example.org:3129", "a.example.org:8118"}, []uint16{3128, 3129, 8118}, 8888},
	} {
		p, err := egress.Parse(c.hosts, nil)
		if err != nil {
			t.Fatalf("egress.Parse(%q) = %v", c.hosts, err)
		}
		got := egressHook{}.Init(Run{Policy: p})
		url := "http://127.0.0.1:" + strconv.Itoa(int(c.proxy))
		if !got.DNS || !slices.Equal(got.Ports, c.ports) || got.Proxy != c.proxy || got.ResolvConf != ResolvConf ||
			!slices.Equal(got.Env, []string{"HTTPS_PROXY=" + url, "https_proxy=" + url}) {
			t.Errorf("egress Init(%q) = %+v, want the stub, ports %v, the proxy on %d in HTTPS_PROXY and https_proxy", c.hosts, got, c.ports, c.proxy)
		}
	}
}
