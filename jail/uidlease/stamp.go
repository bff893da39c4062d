package uidlease

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/stamp"
	"github.com/scidex/scidex-jail/internal/sysfile"
)

// hostAccounts are the account files Check reads, with its last verdict.
var hostAccounts = accountFiles{paths: [4]string{"/etc/passwd", "/etc/group", "/etc/subuid", "/etc/subgid"}}

// accountFiles are passwd, group, subuid and subgid (paths), read and
// checked against a range (clearFiles) unless the files are, by their
// stamps, the ones last found clear for that range. A stamp is what
// stat(2) says of a file (device, inode, size, modification and change
// times; or that it is absent): any write to a file changes its change
// time, and a file replaced (useradd and vipw rename a new one in) is
// another inode, so the same stamps are the same bytes, whose verdict
// (conflict is a pure function of the range and the bytes) is the same.
// A stamp is trusted only when the file's times were settled at the
// stat that took it (internal/stamp: git's racily clean rule; a file
// system with coarse times could take a second write within the same
// tick).
// The stamps are taken before the reads: a file changed in between
// shows another stamp at the next call, which reads it again. A server
// checked every request's range so: four files opened and read each
// time, about a third of its validate phase (issue 36).
type accountFiles struct {
	paths [4]string
	clear clearFiles // the verdict on the bytes, when the stamps differ
	// now is the clock the stamps' age is judged by; nil: time.Now.
	now func() time.Time

	mu      sync.Mutex
	r       Range
	stamps  [4]fileStamp
	trusted bool // r and stamps were found clear, with settled times
	reads   int  // the files read, for the tests
}

// fileStamp is what stat(2) says of an account file; absent: there is
// none (ENOENT), a state of its own.
type fileStamp struct {
	stamp.File
	absent bool
}

// check refuses r if the account files give a reason (conflict),
// reading them unless their stamps are those last found clear for r.
func (a *accountFiles) check(r Range) error {
	now := time.Now
	if a.now != nil {
		now = a.now
	}
	started := now() // before the stats: the time the stamps' age is judged by
	stamps, ok := a.stampAll()
	a.mu.Lock()
	same := ok && a.trusted && a.r == r && a.stamps == stamps
	a.mu.Unlock()
	if same {
		return nil
	}
	var files [4][]byte
	for i, p := range a.paths {
		b, err := sysfile.Read(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("check uid range %s: %w", r, err)
		}
		files[i] = b
	}
	a.mu.Lock()
	a.reads++
	a.trusted = false
	a.mu.Unlock()
	if err := a.clear.conflict(r, files[0], files[1], files[2], files[3]); err != nil {
		return err
	}
	if ok {
		a.mu.Lock()
		a.r, a.stamps, a.trusted = r, stamps, settled(stamps, started)
		a.mu.Unlock()
	}
	return nil
}

// stampAll stats the files; false: one could not be stat'ed for another
// reason than its absence (the read says why, or finds it).
func (a *accountFiles) stampAll() ([4]fileStamp, bool) {
	var out [4]fileStamp
	for i, p := range a.paths {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				out[i].absent = true
				continue
			}
			return out, false
		}
		out[i] = fileStamp{File: stamp.Of(&st)}
	}
	return out, true
}

// settled says whether every file there was settled at t, the time
// taken before the stats (stamp.Settled).
func settled(stamps [4]fileStamp, t time.Time) bool {
	for _, s := range stamps {
		if !s.absent && !s.Settled(t) {
			return false
		}
	}
	return true
}
