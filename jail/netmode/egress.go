package netmode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"

	"github.com/scidex/scidex-jail/jail/egress"
)

// egressHook is the egress mode's side: jail/egress's engine, serving
// the sockets the init made in the run's namespace, from the supervisor
// (in the host's network namespace).
type egressHook struct{}

// proxyPorts are the ports the CONNECT proxy listens on, the first one no
// allowed host takes (a listener on 0.0.0.0:<port> holds that port on
// every local address, 127.0.0.1 too): 3128, squid's, which clients and
// people recognise as a proxy's.
var proxyPorts = []uint16{3128, 3129, 8118, 8888, 13128}

// ResolvConf is the view's /etc/resolv.conf in the egress mode: the DNS
// stub, and nothing to search.
const ResolvConf = "# scidex-jail egress: the supervisor's DNS stub; names outside the profile are refused\nnameserver 127.0.0.1\n"

func (egressHook) Init(run Run) InitSide {
	ports := run.Policy.Ports()
	s := InitSide{DNS: true, Ports: ports, ResolvConf: ResolvConf}
	for _, p := range proxyPorts {
		if !slices.Contains(ports, p) {
			s.Proxy = p
			break
		}
	}
	if s.Proxy != 0 {
		url := "http://127.0.0.1:" + strconv.Itoa(int(s.Proxy))
		// Both cases: curl reads only the lower-case http_proxy, and
		// Python, Go and most others read either. No HTTP_PROXY: the
		// engine tunnels (CONNECT) and never reads a plain request, so
		// http:// goes the captured way, by the stub's address.
		s.Env = []string{"HTTPS_PROXY=" + url, "https_proxy=" + url}
	}
	return s
}

func (egressHook) Start(ctx context.Context, run Run) (Session, error) {
	eng, err := egress.New(egress.Config{Policy: run.Policy, Budgets: run.Budgets})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	return &egressSession{eng: eng, ctx: ctx, cancel: cancel, want: egressHook{}.Init(run)}, nil
}

type egressSession struct {
	eng    *egress.Engine
	ctx    context.Context
	cancel context.CancelFunc
	want   InitSide
}

// Serve turns the descriptors into the engine's sockets (the net
// package's own copies: each file is closed once converted) and serves
// them.
func (s *egressSession) Serve(files []*os.File) error {
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	n := len(s.want.Ports)
	if s.want.DNS {
		n++
	}
	if s.want.Proxy != 0 {
		n++
	}
	if len(files) != n {
		return fmt.Errorf("the init handed %d sockets over, want %d", len(files), n)
	}
	var socks egress.Sockets
	var errs []error
	next := files
	if s.want.DNS {
		pc, err := net.FilePacketConn(next[0])
		errs = append(errs, err)
		socks.DNS = pc
		next = next[1:]
	}
	for range s.want.Ports {
		l, err := net.FileListener(next[0])
		errs = append(errs, err)
		if l != nil {
			socks.Ports = append(socks.Ports, l)
		}
		next = next[1:]
	}
	if s.want.Proxy != 0 {
		l, err := net.FileListener(next[0])
		errs = append(errs, err)
		socks.Proxy = l
	}
	if err := errors.Join(errs...); err != nil {
		closeSockets(socks)
		return fmt.Errorf("take the init's sockets: %w", err)
	}
	return s.eng.Serve(s.ctx, socks)
}

func closeSockets(s egress.Sockets) {
	if s.DNS != nil {
		s.DNS.Close()
	}
	for _, l := range s.Ports {
		l.Close()
	}
	if s.Proxy != nil {
		s.Proxy.Close()
	}
}

func (s *egressSession) Stop() Stopped {
	log := s.eng.Stop()
	s.cancel()
	st := Stopped{Egress: &log}
	if sum := log.Summary(); sum != "" {
		st.Notes = []string{"egress: " + sum}
	}
	return st
}
