package jail

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// postRun does the supervisor's work on what the analysis left (list,
// hash, collect, keep) with the signal machine live: the work runs in its
// own goroutine while this one takes the jail's signals, so a cancel
// (SIGTERM, SIGINT, SIGHUP) stops it within a chunk of a file, and the
// post-run time budget stops it the same way. Everything it does on the
// analysis' behalf is bounded by the spec's OutputBudget.
func (sv *supervisor) postRun(view string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	work := ctx
	if t := sv.spec.Outputs.Time; t > 0 {
		var stop context.CancelFunc
		work, stop = context.WithTimeout(ctx, t)
		defer stop()
	}
	if !sv.cancelAt.IsZero() {
		// The caller asked the run to stop while the analysis ran: the
		// post-run work gets what is left of the grace period (at least
		// a second), so a cancel ends the jail in its cancel time
		// whatever the run directory holds. What it did not get to says
		// so in its entry.
		var stop context.CancelFunc
		work, stop = context.WithDeadline(work, later(sv.cancelAt.Add(sv.spec.Grace), time.Now().Add(time.Second)))
		defer stop()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sv.readOutputs(work, view)
	}()
	for {
		select {
		case <-done:
			// A cancel that came as the work ended (a batch system's
			// SIGTERM to every process of a job reaches the analysis and
			// the jail together) still counts: the report is not settled
			// yet. The work was whole, so the run is cancelled with the
			// analysis' own end, not as a post-run cancel.
			sv.pollSignals()
			return
		case s := <-sv.sigs:
			if !cancelSignals[s] {
				// The analysis has ended: there is no one to pass it to.
				continue
			}
			if !sv.cancelled {
				sv.cancelled, sv.cancelSig = true, s.(syscall.Signal)
			}
			sv.postRunCancelled = true
			cancel()
		}
	}
}

// readOutputs lists (and collects, and with --keep copies to the host) the
// run directory as the init still sees it: for a tmpfs run directory this
// is the only place it exists. Outputs that were asked for (--collect,
// --keep) and cannot be delivered make the run a delivery failure, never
// just a warning; outputs over their budget make it output_limit. It runs
// beside postRun's goroutine and touches none of what that one sets.
func (sv *supervisor) readOutputs(ctx context.Context, view string) {
	r := sv.rep
	outs, over, err := listOutputs(ctx, view, sv.spec.Outputs)
	r.Outputs = outs
	sv.over = over
	if err != nil && ctx.Err() == nil {
		r.Warnings = append(r.Warnings, err.Error())
		if sv.started {
			sv.outputsLost(err.Error())
		}
		// A tmpfs was tried where it lives: finish must not claim
		// another cause (a host directory it tries again itself).
		sv.outputsDone = sv.spec.DiskBytes > 0
		return
	}
	sv.outputsDone = true
	if sv.spec.DiskBytes > 0 {
		var st unix.Statfs_t
		if err := unix.Statfs(view, &st); err == nil {
			r.DiskUsedBytes = int64(st.Blocks-st.Bfree) * st.Bsize
			// Full when less than 64 KiB or 1% of the budget is left:
			// writers fail on a buffer (often 8-64 KiB) that no longer
			// fits, not on the last byte.
			free := int64(st.Bavail) * st.Bsize
			sv.diskFull = free < max(64<<10, sv.spec.DiskBytes/100)
		}
	}
	if !sv.started {
		// Nothing ran: there is nothing to keep or collect, and no
		// collect directory is made.
		return
	}
	if sv.spec.DiskBytes > 0 && sv.spec.Keep {
		// Resolved: collect walks the path without following links, and
		// the tmp-root may be reached through one.
		kept := filepath.Join(sv.spec.RealTmpRoot, sv.dir.name)
		for _, err := range collect(ctx, view, kept, outs) {
			sv.deliveryErrs = append(sv.deliveryErrs, "keep: "+err.Error())
		}
	}
	if sv.spec.Collect != "" {
		for _, err := range collect(ctx, view, sv.spec.Collect, outs) {
			sv.deliveryErrs = append(sv.deliveryErrs, err.Error())
		}
		r.CollectedTo = sv.spec.Collect
	}
	if sv.over == nil && ctx.Err() == context.DeadlineExceeded {
		// Ran out while copying.
		sv.over = &OverBudget{Budget: "time", Limit: sv.spec.Outputs.Time.String(), Size: -1}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// outputsLost records that the outputs could not be read: a delivery
// failure when they were to be collected or kept.
func (sv *supervisor) outputsLost(why string) {
	if sv.spec.Collect != "" || (sv.spec.Keep && sv.spec.DiskBytes > 0) {
		sv.deliveryErrs = append(sv.deliveryErrs, fmt.Sprintf("the outputs could not be read, so nothing was collected or kept: %s", why))
	}
}
