package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"golang.org/x/sys/unix"
)

// summaryTo is where `run` writes its closing summary line (--summary):
// stderr, which the analysis' stderr shares (the default: a person at a
// terminal sees how the run ended below its output); none; or an
// inherited descriptor of its own, fd:N, so that a program can keep the
// two apart without telling lines apart (it can also read the report).
// A report that could not be delivered (exit 122) follows the line; with
// none it still goes to stderr, being the run's only record.
type summaryTo struct {
	fd   int  // 2 for stderr, or the inherited descriptor
	none bool // no summary line
}

func (v *summaryTo) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("destination", &s); err != nil {
		return err
	}
	return v.UnmarshalText([]byte(s))
}

func (v *summaryTo) UnmarshalText(b []byte) error {
	s := string(b)
	switch {
	case s == "stderr":
		*v = summaryTo{fd: 2}
		return nil
	case s == "none":
		*v = summaryTo{fd: 2, none: true}
		return nil
	case strings.HasPrefix(s, "fd:"):
		n, err := strconv.Atoi(s[len("fd:"):])
		if err != nil || n <= 2 {
			return fmt.Errorf("%q: give fd:N with N above 2, a descriptor the jail inherits (stderr is --summary=stderr)", s)
		}
		*v = summaryTo{fd: n}
		return nil
	}
	return fmt.Errorf("%q: give stderr, none or fd:N", s)
}

// open checks an inherited descriptor before the run, so that a bad one
// is bad input (exit 125) with nothing made, and keeps it from the init
// (close-on-exec). It returns where the summary goes, nil for none.
func (v summaryTo) open() (io.Writer, error) {
	switch {
	case v.none:
		return nil, nil
	case v.fd == 2:
		return os.Stderr, nil
	}
	if _, err := unix.FcntlInt(uintptr(v.fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return nil, bad("--summary fd:%d: %v; pass a descriptor the jail inherits (e.g. 3>summary.txt)", v.fd, err)
	}
	return os.NewFile(uintptr(v.fd), "summary"), nil
}

// stderrWait is how long the summary may wait for a stderr that does not
// take it (a pipe its reader stopped reading): the run is over and its
// report written; the line is a courtesy.
const stderrWait = 2 * time.Second

// say writes b to w without letting w decide the run: a closed pipe is an
// EPIPE (SIGPIPE is caught, earlysig), which is ignored, and a full one is
// given up after wait, the write left blocked in its goroutine until the
// process exits.
func say(w io.Writer, b []byte, wait time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Write(b)
	}()
	select {
	case <-done:
	case <-time.After(wait):
	}
}
