package initproc

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/scidex/scidex-jail/internal/sysfile"
	"github.com/scidex/scidex-jail/internal/wrap"
)

// confined checks, right before the fork, that the thread about to fork
// the target holds exactly the identity the setup gave it, as the kernel
// sees it: uid and gid uid/gid (real, effective, saved, filesystem), every
// capability set empty, no_new_privs, seccomp filtering when a filter
// was loaded, and exactly the supplementary groups the plan kept (none
// when the init could clear them; see protocol.Config.Groups). The setup applies these to this thread only (the raw system
// calls, without the all-threads machinery); the target inherits this
// thread's state and nothing of the init's other threads, which run only
// the Go runtime and the init's own goroutines. A thread that is not as
// planned fails the run closed, stage "exec".
func confined(uid, gid int, groups []int, seccomp bool) error {
	b, err := sysfile.Read("/proc/thread-self/status")
	if err != nil {
		return wrap.Error("read the forking thread's status", err)
	}
	return checkStatus(b, uid, gid, groups, seccomp)
}

// checkStatus checks the lines of a /proc/<tid>/status (see confined). A
// line that is missing counts as empty. The kernel lists the groups in the
// order of their host ids, which the plan does not know: they are compared
// sorted, as a set with repeats (two host groups may both show as the
// overflow gid).
func checkStatus(status []byte, uid, gid int, groups []int, seccomp bool) error {
	const none = "0000000000000000"
	ids := func(v int) string {
		s := strconv.Itoa(v)
		return s + "\t" + s + "\t" + s + "\t" + s
	}
	want := []struct{ key, val string }{
		{"Uid", ids(uid)}, {"Gid", ids(gid)}, {"Groups", sortedIDs(groups)},
		{"CapInh", none}, {"CapPrm", none}, {"CapEff", none}, {"CapBnd", none}, {"CapAmb", none},
		{"NoNewPrivs", "1"},
	}
	if seccomp {
		want = append(want, struct{ key, val string }{"Seccomp", "2"})
	}
	got := make([][]byte, len(want))
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		for i, w := range want {
			if string(k) == w.key {
				got[i] = bytes.TrimSpace(v)
			}
		}
	}
	for i, w := range want {
		if w.key == "Groups" {
			got[i] = []byte(sortedIDs(parseIDs(got[i])))
		}
		if string(got[i]) != w.val {
			return errors.New("bug: the thread forking the target has " + w.key + " " + strconv.Quote(string(got[i])) + ", want " + strconv.Quote(w.val) + ": it is not confined as planned")
		}
	}
	return nil
}

// sortedIDs is ids sorted, space-separated: the Groups line's form.
func sortedIDs(ids []int) string {
	s := slices.Sorted(slices.Values(ids))
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Itoa(v)
	}
	return strings.Join(out, " ")
}

// parseIDs reads a Groups line's ids; a field that is not a number is
// kept as -1, so that it can match no planned group.
func parseIDs(line []byte) []int {
	var out []int
	for _, f := range strings.Fields(string(line)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			v = -1
		}
		out = append(out, v)
	}
	return out
}
