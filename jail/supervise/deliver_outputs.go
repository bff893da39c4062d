package supervise

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// outputsRead is what the post-run work found and delivered: the listing,
// the first budget it went over, the run directory's use, and what could
// not be delivered.
type outputsRead struct {
	list         []runfiles.Output
	over         *jail.OverBudget // the first output budget the outputs went over
	diskUsed     int64            // of the run directory's budget, when it has one
	diskFull     bool
	collectedTo  string
	deliveryErrs []string // outputs asked for (--collect, --keep) that could not be delivered
	warnings     []string
	read         bool // the run directory was listed (list is the listing)
	// done: read where they live; false only when a host run directory
	// may still be read again from the host (salvage).
	done bool
}

// postRun does the supervisor's work on what the analysis left (list,
// hash, collect, keep) at view with the signal machine live: the work runs
// in its own goroutine while this one takes the jail's signals, so a
// cancel (SIGTERM, SIGINT, SIGHUP) stops it within a chunk of a file, and
// the post-run time budget stops it the same way. Everything it does on
// the analysis' behalf is bounded by the spec's OutputBudget.
func (sv *supervisor) postRun(view string, started bool) outputsRead {
	p, sm := &sv.plan.Run, sv.sig
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	work := ctx
	if t := p.Outputs.Time; t > 0 {
		var stop context.CancelFunc
		work, stop = context.WithTimeout(ctx, t)
		defer stop()
	}
	if !sm.cancelAt.IsZero() {
		// The caller asked the run to stop while the analysis ran: the
		// post-run work gets what is left of the grace period (at least
		// a second), so a cancel ends the jail in its cancel time
		// whatever the run directory holds. What it did not get to says
		// so in its entry.
		var stop context.CancelFunc
		work, stop = context.WithDeadline(work, later(sm.cancelAt.Add(p.Grace), time.Now().Add(time.Second)))
		defer stop()
	}
	done := make(chan outputsRead)
	go func() { done <- readOutputs(work, view, p, started) }()
	for {
		select {
		case out := <-done:
			// A cancel that came as the work ended (a batch system's
			// SIGTERM to every process of a job reaches the analysis and
			// the jail together) still counts: the report is not settled
			// yet. The work was whole, so the run is cancelled with the
			// analysis' own end, not as a post-run cancel.
			sm.poll()
			return out
		case sig := <-sm.c:
			if sm.duringPostRun(sig) {
				cancel()
			}
		}
	}
}

// readOutputs lists (and collects, and with --keep copies to the host) the
// run directory as the init still sees it, at view: for a tmpfs run
// directory this is the only place it exists. Outputs that were asked for
// (--collect, --keep) and cannot be delivered make the run a delivery
// failure, never just a warning; outputs over their budget make it
// output_limit. It touches nothing but what it returns.
func readOutputs(ctx context.Context, view string, s *jail.RunPlan, started bool) outputsRead {
	out := outputsRead{read: true}
	outs, over, err := runfiles.ListOutputs(ctx, view, s.Outputs)
	out.list, out.over = outs, over
	if err != nil && ctx.Err() == nil {
		out.warnings = append(out.warnings, err.Error())
		if started {
			out.deliveryErrs = outputsLost(s, err.Error())
		}
		// A tmpfs was tried where it lives: the cleanup must not claim
		// another cause (a host directory it tries again itself).
		out.done = s.DiskBytes > 0
		return out
	}
	out.done = true
	if s.DiskBytes > 0 {
		out.diskUsed, out.diskFull = diskUse(view, s.DiskBytes)
	}
	if !started {
		// Nothing ran: there is nothing to keep or collect, and no
		// collect directory is made.
		return out
	}
	if s.KeepTo != "" {
		for _, err := range runfiles.Collect(ctx, view, s.KeepTo, outs) {
			out.deliveryErrs = append(out.deliveryErrs, "keep: "+err.Error())
		}
	}
	if s.Collect != "" {
		for _, err := range runfiles.Collect(ctx, view, s.Collect, outs) {
			out.deliveryErrs = append(out.deliveryErrs, err.Error())
		}
		out.collectedTo = s.Collect
	}
	if out.over == nil && ctx.Err() == context.DeadlineExceeded {
		// Ran out while copying.
		out.over = &jail.OverBudget{Budget: "time", Limit: s.Outputs.Time.String(), Size: -1}
	}
	return out
}

// diskUse is how much of a tmpfs run directory's budget is used, and
// whether it is full: less than 64 KiB or 1% of the budget left, since
// writers fail on a buffer (often 8-64 KiB) that no longer fits, not on
// the last byte. Zero when it cannot be read.
func diskUse(view string, budget int64) (used int64, full bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(view, &st); err != nil {
		return 0, false
	}
	free := int64(st.Bavail) * st.Bsize
	return int64(st.Blocks-st.Bfree) * st.Bsize, free < max(64<<10, budget/100)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// outputsLost is the delivery failure of outputs that could not be read,
// when they were to be collected or kept.
func outputsLost(s *jail.RunPlan, why string) []string {
	if s.Collect != "" || s.KeepTo != "" {
		return []string{fmt.Sprintf("the outputs could not be read, so nothing was collected or kept: %s", why)}
	}
	return nil
}
