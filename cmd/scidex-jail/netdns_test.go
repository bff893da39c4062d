package main

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// TestNetHostResolver: host mode exists to reach services by name on the
// allowed ports, so the resolver's configuration must be readable inside
// and a name the host resolves must resolve inside too. (In none and
// loopback mode there is nothing to resolve against.)
func TestNetHostResolver(t *testing.T) {
	requireRoot(t)
	const name = "deb.debian.org"
	conf, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatalf("read the host's resolver configuration: %v", err)
	}
	lit, _ := json.Marshal(string(conf)) // a JSON string is a Python literal
	cases := []netProbe{
		{"resolv.conf as on the host", fmt.Sprintf("0 if open('/etc/resolv.conf').read() == %s else -2", lit), 0},
		{"localhost from /etc/hosts", "resolve('localhost')", 0},
	}
	// Whether the host reaches a resolver at all is the machine's business;
	// when it does, the jail must not be what breaks resolution.
	outside := netProbeOutside(t, []netProbe{{"name", fmt.Sprintf("resolve(%q)", name), 0}})
	if outside["name"] == "0" {
		cases = append(cases, netProbe{"resolve " + name, fmt.Sprintf("resolve(%q)", name), 0})
	} else {
		t.Logf("the host itself does not resolve %s (%s): only the configuration is checked", name, outside["name"])
	}
	got, r := netRunProbes(t, []string{"--net", "host", "--allow-tcp", "443"}, cases)
	netCheckProbes(t, "inside --net host", cases, got, r)
}
