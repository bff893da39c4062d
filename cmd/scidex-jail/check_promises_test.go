package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/hostcheck"
	"github.com/scidex/scidex-jail/jail/profile"
	"github.com/scidex/scidex-jail/jail/promise"
)

// TestCheckPromisesAdvice: a promise check cannot see held names the
// opt-in that would run anyway in the languages that take it: run's flag,
// and a profile the profiles parser reads as written, where the advice
// said "(allow_degraded in the profile)".
func TestCheckPromisesAdvice(t *testing.T) {
	p := profile.Builtins()["default"]
	sec := hostcheck.Security{Landlock: hostcheck.LandlockFinding{Err: "landlock is not in the lsm= boot parameter"}}
	lines := promiseLines(p, sec, checkLine{State: stateOK})
	fixes := map[string]string{}
	for _, l := range lines {
		fixes[strings.TrimPrefix(l.Name, "promise ")] = l.Fix
	}
	for _, c := range []struct {
		promise promise.Promise
		want    []string
		never   string
	}{
		{promise.PromiseFSWrite, []string{"--allow-degraded landlock", `{"base": "default", "allow_degraded": ["landlock"]}`}, "unsafe-disable"},
		{promise.PromiseFSRead, []string{"--allow-degraded landlock", `{"base": "default", "allow_degraded": ["landlock"]}`}, "unsafe-disable"},
	} {
		fix := fixes[string(c.promise)]
		for _, w := range c.want {
			if !strings.Contains(fix, w) {
				t.Errorf("promise %s's fix = %q, want it to hold %q", c.promise, fix, w)
			}
		}
		if strings.Contains(fix, c.never) {
			t.Errorf("promise %s's fix = %q, want no %q", c.promise, fix, c.never)
		}
		for _, snippet := range profileSnippet.FindAllString(fix, -1) {
			file := fmt.Sprintf(`{"profiles": {"advised": %s}}`, snippet)
			if _, err := profile.ParseProfiles([]byte(file), profile.Builtins()); err != nil {
				t.Errorf("promise %s's advised profile %s: ParseProfiles = %v, want it valid as written", c.promise, snippet, err)
			}
		}
	}
}
