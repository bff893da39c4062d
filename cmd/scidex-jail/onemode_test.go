package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/request"
	"github.com/scidex/scidex-jail/seccomp"
)

// withMode adds m to jail/netmode's table for the test's length.
func withMode(t *testing.T, m netmode.Mode) {
	all := netmode.All
	netmode.All = append(slices.Clip(all), m)
	t.Cleanup(func() { netmode.All = all })
}

// TestHypotheticalNetMode: a new network mode is one row of jail/netmode's
// table: with the row alone, --net takes it (and its help says it), a
// profile's net takes it, the schema the Python package reads lists it, a
// spec of it validates, and its plan has the row's namespace, lo, seccomp
// policy, environment and promise layers; refusals name it among the
// choices, and --allow-tcp follows its TCPPorts.
func TestHypotheticalNetMode(t *testing.T) {
	tunnel := netmode.Mode{
		Name: "tunnel", Help: "a mode of the test only", Means: "only through the test's tunnel", Doc: "a row of the test",
		OwnNamespace: true, Loopback: true, Seccomp: seccomp.NetInet, Env: []string{"TUNNEL=1"},
		Layers: map[promise.Promise][]promise.Layer{
			promise.PromiseAbstractSockets: {promise.LayerNetNS, promise.LayerLandlockScope},
			promise.PromiseNoPostgres:      {promise.LayerNetNS, promise.LayerLandlockScope},
			promise.PromiseNetwork:         {promise.LayerNetNS},
		},
	}
	withMode(t, tunnel)

	// The flag: its help and its value.
	var help bytes.Buffer
	var c cli
	if _, err := parse(&c, []string{"run", "--help"}, kong.Writers(&help, &help)); !errors.Is(err, errHelpShown) || !strings.Contains(strings.Join(strings.Fields(help.String()), " "), "tunnel (a mode of the test only)") {
		t.Errorf("run --help = %v, want --net's help to name the row in:\n%s", err, help.String())
	}
	cl, err := parseQuiet(t, "run", "--id", "x", "--net", "tunnel")
	if err != nil {
		t.Fatalf("parse(--net tunnel) = %v", err)
	}
	if fromFlag := resolved(t, cl, t.TempDir()); fromFlag.Net != "tunnel" {
		t.Errorf("--net tunnel: Spec.Net = %q, want tunnel", fromFlag.Net)
	}

	// The request field, as a server decodes it.
	var req request.Request
	if err := json.Unmarshal([]byte(`{"id": "x", "cwd": "/", "command": ["/bin/true"], "net": "tunnel"}`), &req); err != nil {
		t.Fatal(err)
	}
	if fromRequest, err := req.Resolve(option.RequestField); err != nil || fromRequest.Net != "tunnel" {
		t.Errorf("a request of net tunnel: Resolve = %v; want Spec.Net tunnel", err)
	}
	req.Net = "tunel"
	var fe *request.FieldError
	if _, err := req.Resolve(option.RequestField); !errors.As(err, &fe) || fe.Field != "net" || !strings.Contains(err.Error(), `net "tunel": choose none, loopback, host, egress or tunnel`) {
		t.Errorf("a request of net tunel: Resolve = %v; want it refused naming the field and the row among the choices", err)
	}

	// The profile field.
	ps, err := profile.ParseProfiles([]byte(`{"profiles": {"t": {"net": "tunnel"}}}`), profile.Builtins())
	if err != nil || ps["t"].Net != "tunnel" {
		t.Fatalf("ParseProfiles(net tunnel) = %q, %v; want the field read", ps["t"].Net, err)
	}
	if _, err := profile.ParseProfiles([]byte(`{"profiles": {"t": {"net": "tunel"}}}`), profile.Builtins()); err == nil || !strings.Contains(err.Error(), `net "tunel": choose none, loopback, host, egress or tunnel`) {
		t.Errorf("ParseProfiles(net tunel) = %v, want the choices to name the row", err)
	}

	// The schema `profiles --schema` prints, which the Python package reads.
	if opts := option.Schemas(netChoices); !slices.ContainsFunc(opts, func(o option.Schema) bool { return o.Name == "net" && slices.Contains(o.Choices, "tunnel") }) {
		t.Errorf("profiles --schema options = %+v, want net's choices to hold tunnel", opts)
	}

	// A spec of the mode validates, and its plan is the row's.
	s := ps["t"].Spec()
	s.ID, s.Command, s.TmpRoot, s.Root = "x", []string{"/bin/true"}, t.TempDir(), t.TempDir()
	s.HostUID, s.HostGID = 65534, 65534
	r, err := s.Validate()
	if err != nil {
		t.Fatalf("Validate(net tunnel) = %v", err)
	}
	p, _, err := jail.BuildPlan(r, jail.LookHost(&r.Spec))
	if err != nil {
		t.Fatalf("BuildPlan(net tunnel) = %v", err)
	}
	if !slices.ContainsFunc(p.Namespaces, func(n jail.Namespace) bool { return n.Name == "net" }) || !p.Init.Loopback {
		t.Errorf("BuildPlan(net tunnel): namespaces %v, loopback %v; want a net namespace with lo up", p.Namespaces, p.Init.Loopback)
	}
	if sc := p.Init.Security.Seccomp; sc == nil || sc.Net != seccomp.NetInet || sc.String() != "default/tunnel" {
		t.Errorf("BuildPlan(net tunnel) seccomp = %v, want default/tunnel with the inet policy", sc)
	}
	if !slices.Contains(p.Init.Env, "TUNNEL=1") {
		t.Errorf("BuildPlan(net tunnel) env = %q, want the row's TUNNEL=1", p.Init.Env)
	}
	if ll := p.Init.Security.Landlock; ll == nil || ll.HandleTCP {
		t.Errorf("BuildPlan(net tunnel) landlock = %+v, want no TCP rules (the row takes no ports)", ll)
	}
	for _, st := range p.Promises {
		if want, ok := tunnel.Layers[st.Promise]; ok && !slices.Equal(st.Held, want) {
			t.Errorf("BuildPlan(net tunnel) promise %s held by %q, want the row's %q", st.Promise, st.Held, want)
		}
		if st.Promise == promise.PromiseNetwork && !strings.Contains(st.What, "tunnel: only through the test's tunnel") {
			t.Errorf("BuildPlan(net tunnel) network promise = %q, want the row's meaning", st.What)
		}
	}
	if p.Enforced.Net != "tunnel" {
		t.Errorf("BuildPlan(net tunnel) enforced.net = %q, want tunnel", p.Enforced.Net)
	}

	// --allow-tcp needs a mode that takes ports: the row does not. The
	// values are named as a program's spec names them: as flags.
	s.From = option.Origin{}
	s.AllowTCP = []uint16{443}
	if _, err := s.Validate(); err == nil || !strings.Contains(err.Error(), "--allow-tcp needs --net host (in tunnel mode") {
		t.Errorf("Validate(net tunnel, allow-tcp 443) = %v, want it refused for the row", err)
	}
	s.Net = "tunel"
	if _, err := s.Validate(); err == nil || !strings.Contains(err.Error(), `--net "tunel": choose none, loopback, host, egress or tunnel`) {
		t.Errorf("Validate(net tunel) = %v, want the choices to name the row", err)
	}
}

// hookOnly is a supervisor side that is planned, never started.
type hookOnly struct{}

func (hookOnly) Init(netmode.Run) netmode.InitSide {
	return netmode.InitSide{DNS: true, Ports: []uint16{443}, Proxy: 3128, Env: []string{"PROXIED=1"}, ResolvConf: "nameserver 127.0.0.1\n"}
}

func (hookOnly) Start(context.Context, netmode.Run) (netmode.Session, error) {
	return nil, errors.New("started (a plan only starts nothing)")
}

// TestHypotheticalNetModeHook: a mode whose row has a supervisor-side hook
// is planned with it: the init makes the hook's sockets, the analysis gets
// its environment, and the plan hands the supervisor the hook to start.
func TestHypotheticalNetModeHook(t *testing.T) {
	withMode(t, netmode.Mode{
		Name: "proxied", Help: "a mode of the test only", Means: "through the supervisor", Doc: "a row of the test",
		OwnNamespace: true, Loopback: true, Seccomp: seccomp.NetInet, Hook: hookOnly{},
		Layers: map[promise.Promise][]promise.Layer{
			promise.PromiseAbstractSockets: {promise.LayerNetNS}, promise.PromiseNoPostgres: {promise.LayerNetNS}, promise.PromiseNetwork: {promise.LayerNetNS},
		},
	})
	s := profile.Builtins()["default"].Spec()
	s.Net, s.ID, s.Command, s.TmpRoot, s.Root = "proxied", "x", []string{"/bin/true"}, t.TempDir(), t.TempDir()
	s.HostUID, s.HostGID = 65534, 65534
	r, err := s.Validate()
	if err != nil {
		t.Fatalf("Validate(net proxied) = %v", err)
	}
	p, _, err := jail.BuildPlan(r, jail.LookHost(&r.Spec))
	if err != nil {
		t.Fatalf("BuildPlan(net proxied) = %v", err)
	}
	if p.Hook == nil || p.Hook.Hook != (hookOnly{}) || p.Hook.Run.ID != "x" {
		t.Errorf("BuildPlan(net proxied).Hook = %+v, want the row's hook for run x", p.Hook)
	}
	if sk := p.Init.Sockets; sk == nil || !sk.DNS || !slices.Equal(sk.Ports, []int{443}) || sk.Proxy != 3128 {
		t.Errorf("BuildPlan(net proxied).Init.Sockets = %+v, want the hook's DNS, 443 and 3128", sk)
	}
	if !slices.Contains(p.Init.Env, "PROXIED=1") {
		t.Errorf("BuildPlan(net proxied).Init.Env = %q, want the hook's PROXIED=1", p.Init.Env)
	}
}
