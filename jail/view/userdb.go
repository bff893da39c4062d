package view

import (
	"slices"
	"strconv"
	"strings"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// The analysis' own user and group database. Inside, the host's
// /etc/passwd and /etc/group would name host accounts (uid 1000 is
// someone's login on most hosts, and getpass.getuser() would answer with
// it), and on a host without a uid 1000 the libraries that ask for the
// user's name would fail. So the view shows its own two files instead,
// bound over the host's by the init (Mounts.Files): the analysis' user
// and group, uid and gid protocol.InsideUID, with the HOME its environment has,
// and the overflow user and group (nobody, nogroup), which every file of
// an unmapped owner and every kept supplementary group shows as inside.
// Nothing else: no host account, not even root, whose uid is unmapped.

// AnalysisUser is the analysis' user and group name inside.
const AnalysisUser = "analysis"

// UserDB is the view's /etc/passwd and /etc/group for a run whose target
// has environment env, on host h: only those of the two that the host has
// (a file the host lacks has no mount point in the read-only /etc, and no
// host account to hide).
func UserDB(env []string, h HostView) []protocol.File {
	home := passwdField(envValue(env, "HOME"), "/")
	ouid, ogid := h.OverflowUID, h.OverflowGID
	// Concatenated, not formatted: every request's plan makes them.
	in := strconv.Itoa(protocol.InsideUID)
	passwd := AnalysisUser + ":x:" + in + ":" + in + ":scidex analysis:" + home + ":/bin/sh\n"
	group := AnalysisUser + ":x:" + in + ":\n"
	if ouid != protocol.InsideUID {
		passwd += "nobody:x:" + strconv.Itoa(ouid) + ":" + strconv.Itoa(ogid) + ":nobody:/nonexistent:/usr/sbin/nologin\n"
	}
	if ogid != protocol.InsideUID {
		group += "nogroup:x:" + strconv.Itoa(ogid) + ":\n"
	}
	var out []protocol.File
	for _, f := range []protocol.File{{Path: "/etc/passwd", Content: passwd}, {Path: "/etc/group", Content: group}} {
		if slices.Contains(h.Etc, f.Path) {
			out = append(out, f)
		}
	}
	return out
}

// envValue is the value of the last name= entry of env, "" when none.
func envValue(env []string, name string) string {
	v := ""
	prefix := name + "="
	for _, kv := range env {
		if s, ok := strings.CutPrefix(kv, prefix); ok {
			v = s
		}
	}
	return v
}

// passwdField is v as one field of a passwd line, or def when v is empty
// or would break the line (a ':' or a newline from --env HOME=...).
func passwdField(v, def string) string {
	if v == "" || strings.ContainsAny(v, ":\n") {
		return def
	}
	return v
}
