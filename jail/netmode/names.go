package netmode

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/scidex/scidex-jail/jail/egress"
)

// namesHook is the none mode's side: the analysis' name lookups are
// answered (refused) and recorded by jail/egress's Names, over the C
// library's name service socket in the view, so that the notes can say
// what the analysis tried to reach. It needs no inet socket: the mode's
// seccomp filter keeps refusing them.
type namesHook struct {
	why string // the notes' reason: "this profile allows no network"
}

func (namesHook) Init(Run) InitSide { return InitSide{Names: true} }

func (h namesHook) Start(_ context.Context, run Run) (Session, error) {
	// The view shows the host's /etc/hosts: the names it answers.
	return &namesSession{names: egress.NewNames(run.Budgets.Entries, "/etc/hosts"), why: h.why}, nil
}

type namesSession struct {
	names *egress.Names
	why   string
}

func (s *namesSession) Serve(files []*os.File) error {
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if len(files) != 1 {
		return fmt.Errorf("the init handed %d sockets over, want the name service's", len(files))
	}
	l, err := net.FileListener(files[0])
	if err != nil {
		return fmt.Errorf("take the init's name service socket: %w", err)
	}
	s.names.Serve(l)
	return nil
}

func (s *namesSession) Stop() Stopped {
	log := s.names.Stop()
	st := Stopped{Egress: &log}
	if sum := log.NamesSummary(s.why); sum != "" {
		st.Notes = []string{sum}
	}
	return st
}
