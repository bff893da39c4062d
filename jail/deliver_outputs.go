package jail

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// readOutputs lists (and collects, and with --keep copies to the host) the
// run directory as the init still sees it: for a tmpfs run directory this
// is the only place it exists. Outputs that were asked for (--collect,
// --keep) and cannot be delivered make the run a delivery failure, never
// just a warning.
func (sv *supervisor) readOutputs(view string) {
	r := sv.rep
	outs, err := listOutputs(view)
	r.Outputs = outs
	if err != nil {
		r.Warnings = append(r.Warnings, err.Error())
		if sv.started {
			sv.outputsLost(err.Error())
		}
		return
	}
	sv.outputsDone = true
	if sv.spec.DiskBytes > 0 {
		var st unix.Statfs_t
		if err := unix.Statfs(view, &st); err == nil {
			sv.diskUsed = int64(st.Blocks-st.Bfree) * st.Bsize
			// Full when less than 64 KiB or 1% of the budget is left:
			// writers fail on a buffer (often 8-64 KiB) that no longer
			// fits, not on the last byte.
			free := int64(st.Bavail) * st.Bsize
			sv.diskFull = free < max(64<<10, sv.spec.DiskBytes/100)
			r.DiskUsedBytes = sv.diskUsed
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
		kept := filepath.Join(sv.spec.resolvedTmpRoot(), sv.dir.name)
		for _, err := range collect(view, kept, outs) {
			sv.deliveryErrs = append(sv.deliveryErrs, "keep: "+err.Error())
		}
	}
	if sv.spec.Collect != "" {
		for _, err := range collect(view, sv.spec.Collect, outs) {
			sv.deliveryErrs = append(sv.deliveryErrs, err.Error())
		}
		r.CollectedTo = sv.spec.Collect
	}
}

// outputsLost records that the outputs could not be read: a delivery
// failure when they were to be collected or kept.
func (sv *supervisor) outputsLost(why string) {
	if sv.spec.Collect != "" || (sv.spec.Keep && sv.spec.DiskBytes > 0) {
		sv.deliveryErrs = append(sv.deliveryErrs, fmt.Sprintf("the outputs could not be read, so nothing was collected or kept: %s", why))
	}
}
