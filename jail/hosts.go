package jail

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/scidex/scidex-jail/jail/egress"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/view"
)

// HookPlan is the network mode's supervisor-side work, decided: the hook
// and what it is told of the run. The init's part (the sockets it makes,
// the view's resolv.conf, the environment) is in the init's config.
type HookPlan struct {
	Hook netmode.Hook
	Run  netmode.Run
}

// validateHosts checks the allowed hosts and ranges: only for a mode that
// takes them (netmode.Mode.CheckHosts), each an entry jail/egress reads,
// named as the user wrote it.
func (s *Spec) validateHosts(mode netmode.Mode) error {
	if pe := mode.CheckHosts(len(s.AllowHosts) + len(s.AllowRanges)); pe != nil {
		row := option.AllowHosts
		if len(s.AllowHosts) == 0 {
			row = option.AllowRanges
		}
		return fmt.Errorf("%w: %s %s", ErrBadSpec, s.From.Name(row), pe.Needs(s.From.Join(option.Net)))
	}
	if _, err := egress.Parse(s.AllowHosts, s.AllowRanges); err != nil {
		row := option.AllowHosts
		if ee := (*egress.EntryError)(nil); errors.As(err, &ee) && ee.Kind == "range" {
			row = option.AllowRanges
		}
		return fmt.Errorf("%w: %s %w", ErrBadSpec, s.From.Name(row), err)
	}
	return nil
}

// hookRun is what net's hook is told of the run of s.
func hookRun(s *Spec) netmode.Run {
	// Validate parsed the same entries: an error here cannot happen.
	policy, _ := egress.Parse(s.AllowHosts, s.AllowRanges)
	return netmode.Run{ID: s.ID, Policy: policy, Budgets: egressBudgets(s.Limits)}
}

// egressBudgets are the egress engine's budgets from the run's limits
// (jail/limits' egress rows; one switched off is no budget, where the
// engine's zero would be its default). Its log keeps as many entries as
// the output-entries budget allows the outputs: the bound the report
// already has on the lists an analysis can grow (none: the engine's
// default of 1000, since a report must stay bounded).
func egressBudgets(v limits.Values) egress.Budgets {
	or := func(n, off int64) int64 {
		if n == 0 {
			return off
		}
		return n
	}
	return egress.Budgets{
		Connections: int(or(v.Int(limits.EgressConnections), math.MaxInt32)),
		Up:          or(v.Int(limits.EgressUpload), math.MaxInt64),
		Down:        or(v.Int(limits.EgressDownload), math.MaxInt64),
		// 100 years: no budget, with room for the deadline arithmetic.
		ConnTime: time.Duration(or(v.Int(limits.EgressConnTime), int64(100*365*24*time.Hour))),
		Entries:  int(v.Int(limits.OutputEntries)),
	}
}

// modeEnv is what the network mode adds to the analysis' environment:
// its row's, and its hook's (the proxy's address).
func modeEnv(s *Spec, net netmode.Mode) []string {
	env := append([]string{}, net.Env...)
	if net.Hook != nil {
		env = append(env, net.Hook.Init(hookRun(s)).Env...)
	}
	return env
}

// planHook plans the mode's hook, nil for a mode without one: the sockets
// the init makes for it (c.Sockets) and the view's resolv.conf, laid over
// the host's when that is a regular file (readable through Landlock);
// when it is a link, its target is out of the view (the mode has no
// resolver) and the C library and Go both fall back to 127.0.0.1, the
// stub's address.
func planHook(s *Spec, h view.HostView, net netmode.Mode, c *protocol.Config) *HookPlan {
	if net.Hook == nil {
		return nil
	}
	run := hookRun(s)
	side := net.Hook.Init(run)
	if side.DNS || side.Proxy != 0 || len(side.Ports) > 0 {
		sk := &protocol.Sockets{DNS: side.DNS, Proxy: int(side.Proxy)}
		for _, p := range side.Ports {
			sk.Ports = append(sk.Ports, int(p))
		}
		c.Sockets = sk
	}
	c.Mounts.Names = side.Names
	if side.ResolvConf != "" && h.ResolvFile {
		c.Mounts.Files = append(c.Mounts.Files, protocol.File{Path: "/etc/resolv.conf", Content: side.ResolvConf})
		if ll := c.Security.Landlock; ll != nil {
			ll.ReadExec = append(ll.ReadExec, "/etc/resolv.conf")
		}
	}
	return &HookPlan{Hook: net.Hook, Run: run}
}
