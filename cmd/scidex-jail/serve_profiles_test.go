package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeProfilesFileEdited: a server reads a request's profiles file
// at every request, so a profile edited between two requests of the same
// shape is the second's, byte for byte as edited: the parse kept for the
// file's old bytes is not used for the new (issue 36).
func TestServeProfilesFileEdited(t *testing.T) {
	root := tmpRoot(t)
	config := filepath.Join(root, "profiles.json")
	c := startServe(t, "--slots", "1")
	for i, mem := range []string{"300M", "300M", "400M", "300M"} {
		data := `{"profiles": {"q36": {"base": "tool", "memory": "` + mem + `"}}}`
		if err := os.WriteFile(config+".new", []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(config+".new", config); err != nil {
			t.Fatal(err)
		}
		req := "edit" + string(rune('a'+i))
		fds, output := stdioPipes(t)
		c.send(runReq(req, request.Request{ID: "profile-" + req, Cwd: root, TmpRoot: root, Config: config, Profile: "q36"}, "/usr/bin/true"), fds...)
		r := c.await(req)
		output()
		if r.failed() {
			t.Fatalf("request %s: %s %s", req, r.Event, r.Error)
		}
		want, _ := limits.Memory.Parse(mem)
		if got := r.report(t).Limits.Values.Int(limits.Memory); got != want.Int() {
			t.Errorf("request %s with the file's memory %s: limits.memory_bytes = %d, want %d", req, mem, got, want.Int())
		}
	}
}
