package view

import (
	"reflect"
	"testing"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

func TestUserDB(t *testing.T) {
	both := []string{"/etc/passwd", "/etc/group", "/etc/hosts"}
	cases := []struct {
		name string
		env  []string
		etc  []string
		ouid int
		want []protocol.File
	}{
		{"home from the env", []string{"PATH=/bin", "HOME=/home/analysis"}, both, 65534, []protocol.File{
			{Path: "/etc/passwd", Content: "analysis:x:1000:1000:scidex analysis:/home/analysis:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
			{Path: "/etc/group", Content: "analysis:x:1000:\nnogroup:x:65534:\n"},
		}},
		{"the last HOME wins", []string{"HOME=/a", "HOME=/tmp/scidex-analysis-x"}, both, 65534, []protocol.File{
			{Path: "/etc/passwd", Content: "analysis:x:1000:1000:scidex analysis:/tmp/scidex-analysis-x:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
			{Path: "/etc/group", Content: "analysis:x:1000:\nnogroup:x:65534:\n"},
		}},
		{"no HOME", nil, []string{"/etc/passwd"}, 65534, []protocol.File{
			{Path: "/etc/passwd", Content: "analysis:x:1000:1000:scidex analysis:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
		}},
		{"a HOME that would break the line", []string{"HOME=/x:0:0::/:/bin/sh\nroot"}, []string{"/etc/passwd"}, 65534, []protocol.File{
			{Path: "/etc/passwd", Content: "analysis:x:1000:1000:scidex analysis:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
		}},
		{"overflow uid is ours", []string{"HOME=/h"}, []string{"/etc/passwd"}, 1000, []protocol.File{
			{Path: "/etc/passwd", Content: "analysis:x:1000:1000:scidex analysis:/h:/bin/sh\n"},
		}},
		{"host without them", []string{"HOME=/h"}, []string{"/etc/hosts"}, 65534, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := HostView{Etc: c.etc, OverflowUID: c.ouid, OverflowGID: 65534}
			if got := UserDB(c.env, h); !reflect.DeepEqual(got, c.want) {
				t.Errorf("UserDB(%q) = %q, want %q", c.env, got, c.want)
			}
		})
	}
}
