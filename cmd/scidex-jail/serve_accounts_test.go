package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeAccountAdded: a server keeps its last verdict on the account
// files while their stamps stay (uidlease's accountFiles), so a group
// added in a request's uid range between two requests of the same shape
// refuses the second, and its removal lets the third run (issue 36).
func TestServeAccountAdded(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	rng := freeRange()
	gid, _ := strconv.Atoi(strings.SplitN(rng, "-", 2)[0])
	group := fmt.Sprintf("sjt-g%d-%d", gid, rand.IntN(1000))
	c := startServe(t, "--slots", "1")
	added := false
	t.Cleanup(func() {
		if added {
			sysCleanup(t, "groupdel", group)
		}
	})
	for i, s := range []struct {
		name   string
		change func()
		want   string // in the refusal; "": the run goes
	}{
		{"first", func() {}, ""},
		{"the same files", func() {}, ""},
		{"a group added in the range", func() {
			sysRun(t, "groupadd", "-g", strconv.Itoa(gid), group)
			added = true
		}, fmt.Sprintf("id %d of %q in /etc/group", gid, group)},
		{"still there", func() {}, fmt.Sprintf("id %d of %q in /etc/group", gid, group)},
		{"removed", func() { sysRun(t, "groupdel", group); added = false }, ""},
	} {
		s.change()
		var req string
		var r serveReply
		// The range's one id is the last run's until its cleanup, after
		// its reply, has ended: a request that comes before is refused
		// as a full range ("wait for runs to end"), and is sent again.
		for try := 0; ; try++ {
			req = "acct" + strconv.Itoa(i) + "-" + strconv.Itoa(try)
			fds, output := stdioPipes(t)
			c.send(runReq(req, request.Request{ID: "accounts-" + req, Cwd: root, TmpRoot: root, UIDRange: rng}, "/usr/bin/true"), fds...)
			r = c.await(req)
			output()
			if !r.failed() || !strings.Contains(r.Error, "every id of the uid range is leased") || try == 50 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		switch {
		case s.want == "" && r.failed():
			t.Errorf("%s: request %s: %s %s, want it run", s.name, req, r.Event, r.Error)
		case s.want != "" && (!r.failed() || !strings.Contains(r.Error, s.want)):
			t.Errorf("%s: request %s: %s %q, want it refused naming %q", s.name, req, r.Event, r.Error, s.want)
		}
	}
}
