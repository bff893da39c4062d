package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDecodeRequest: a line is a request or a RequestError naming the
// field to fix, as the line names it.
func TestDecodeRequest(t *testing.T) {
	cases := []struct {
		name, line, field, wantErr string
	}{
		{"run", `{"op":"run","req":"r-1.x_y","run":{"id":"a","cwd":"/a","command":["true"],"limits":{"memory":"1G"},"read_only":["/x"]},"stdio":3}`, "", ""},
		{"cancel", `{"op":"cancel","req":"r1"}`, "", ""},
		{"not json", `{`, "", "malformed request"},
		{"two values", `{"op":"cancel","req":"r1"} {}`, "", "more than one JSON value"},
		{"unknown field", `{"op":"cancel","req":"r1","x":1}`, "x", `unknown field "x"`},
		{"unknown field of the run", `{"op":"run","req":"r","run":{"id":"a","cwd":"/","command":["x"],"memroy":"1G"}}`, "run.memroy", `unknown field "run.memroy"`},
		{"protocol 1's args", `{"op":"run","req":"r1","cwd":"/a","args":["--id","a"],"command":["true"]}`, "cwd", `protocol 1's request ("cwd"`},
		{"protocol 1's args alone", `{"op":"run","req":"r1","args":["--id","a"]}`, "args", "protocol 2, whose run request carries the run as an object"},
		{"no name", `{"op":"cancel"}`, "req", "bad request name"},
		{"long name", `{"op":"cancel","req":"` + strings.Repeat("a", 65) + `"}`, "req", "bad request name"},
		{"slash in name", `{"op":"cancel","req":"a/b"}`, "req", "bad request name"},
		{"unknown op", `{"op":"kill","req":"r"}`, "op", "unknown op"},
		{"a cancel with a run", `{"op":"cancel","req":"r","run":{}}`, "op", "leave out run, stdio and names"},
		{"names in flags", `{"op":"run","req":"r","run":{"cwd":"/","command":["x"]},"names":"flag"}`, "", ""},
		{"names in no language", `{"op":"run","req":"r","run":{"cwd":"/","command":["x"]},"names":"profile field"}`, "names", `names "profile field": give "request field" (the default), "flag" or "keyword"`},
		{"no run", `{"op":"run","req":"r"}`, "run", `no "run"`},
		{"no command", `{"op":"run","req":"r","run":{"id":"a","cwd":"/"}}`, "run.command", "no command"},
		{"stdio 2", `{"op":"run","req":"r","run":{"cwd":"/","command":["x"]},"stdio":2}`, "stdio", "send 0 or 3"},
		{"wrong type", `{"op":"run","req":"r","run":{"cwd":"/","command":"x"}}`, "run.command", "a JSON string where the request takes []string"},
		{"a port out of range", `{"op":"run","req":"r","run":{"cwd":"/","command":["x"],"allow_tcp":[70000]}}`, "run.allow_tcp", "number 70000"},
		{"run not an object", `{"op":"run","req":"r","run":5}`, "run", "malformed request"},
	}
	for _, tc := range cases {
		_, err := DecodeRequest([]byte(tc.line))
		var re *RequestError
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: DecodeRequest(%s) = %v, want no error", tc.name, tc.line, err)
		case tc.wantErr != "" && (!errors.As(err, &re) || re.Field != tc.field || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: DecodeRequest(%s) = %#v, want field %q and an error with %q", tc.name, tc.line, err, tc.field, tc.wantErr)
		}
	}
}

// nameOracle is the rule validName implements, as a regexp.
var nameOracle = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func TestValidName(t *testing.T) {
	for _, s := range []string{"", "a", "r1", "A.b_c-9", strings.Repeat("x", 64), strings.Repeat("x", 65), "a b", "a/b", "ä", "a\n", "\x00", "r1\n", "-", "..", "Z@"} {
		if got, want := validName(s), nameOracle.MatchString(s); got != want {
			t.Errorf("validName(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzDecodeRequest: whatever a client sends, the decoder returns, and
// what it accepts holds the rules the server relies on.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"op":"run","req":"r1","run":{"id":"a","cwd":"/a","command":["true"],"limits":{"memory":"1G"}},"stdio":3}`))
	f.Add([]byte(`{"op":"cancel","req":"r1"}`))
	f.Add([]byte(`{"op":"run","req":"r1","run":{"cwd":"/","command":[""],"uid":1},"stdio":-1}`))
	f.Add([]byte(`{"op":"run","req":"r1","cwd":"/a","args":["--id","a"],"command":["true"],"stdio":3}`))
	f.Add([]byte("\x00{}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := DecodeRequest(line)
		var re *RequestError
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("DecodeRequest(%q) = %v, not a RequestError", line, err)
		}
		if err != nil {
			return
		}
		if !nameOracle.MatchString(r.Req) {
			t.Fatalf("accepted name %q", r.Req)
		}
		if r.Op == "run" && (r.Run == nil || len(r.Run.Command) == 0 || (r.Stdio != 0 && r.Stdio != 3)) {
			t.Fatalf("accepted run %+v", r)
		}
		if r.Op == "cancel" && (r.Run != nil || r.Stdio != 0) {
			t.Fatalf("accepted cancel %+v", r)
		}
		if r.Op != "run" && r.Op != "cancel" {
			t.Fatalf("accepted op %q", r.Op)
		}
	})
}

// socketPair is a connected pair: the server's end as a *net.UnixConn and
// the client's as a raw fd.
func socketPair(t *testing.T) (*net.UnixConn, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[0]), "server")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); unix.Close(fds[1]) })
	return c.(*net.UnixConn), fds[1]
}

func openFDs(t *testing.T, n int) []int {
	t.Helper()
	var fds []int
	for range n {
		fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
		t.Cleanup(func() { unix.Close(fd) })
	}
	return fds
}

// TestLineReaderClaims: each line gets the descriptors sent with it, and
// none of another's; those sent with a line too long are closed.
func TestLineReaderClaims(t *testing.T) {
	srv, cli := socketPair(t)
	send := func(line string, fds []int) {
		var oob []byte
		if len(fds) > 0 {
			oob = unix.UnixRights(fds...)
		}
		if err := unix.Sendmsg(cli, []byte(line), oob, nil, 0); err != nil {
			t.Error(err)
		}
	}
	three, two, one := openFDs(t, 3), openFDs(t, 2), openFDs(t, 1)
	// The long line fills the socket's buffer: the reader reads meanwhile.
	go func() {
		send("plain\n", nil)
		send("three\n", three)
		send("long"+strings.Repeat("x", MaxLine+10)+"\n", two)
		send("one\n", one)
		send("half", nil)
		send(" more\n", nil)
		send("over"+strings.Repeat("x", MaxLine)+"\n", nil)
		unix.Shutdown(cli, unix.SHUT_WR)
	}()
	lr := newLineReader(srv)
	var got []string
	for {
		line, err := lr.next()
		if errors.Is(err, errTooLong) {
			got = append(got, "too long")
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		fds := lr.take()
		got = append(got, string(line)+":"+strings.Repeat("f", len(fds)))
		closeFDs(fds)
	}
	lr.close()
	want := []string{"plain:", "three:fff", "too long", "one:f", "half more:", "too long"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("lines with their descriptors = %q, want %q", got, want)
	}
}

// TestLineReaderPipe: over a plain stream, lines come without descriptors.
func TestLineReaderPipe(t *testing.T) {
	lr := newLineReader(bytes.NewReader([]byte("a\nb\n")))
	for _, want := range []string{"a", "b"} {
		line, err := lr.next()
		if err != nil || string(line) != want || len(lr.take()) != 0 {
			t.Fatalf("next() = %q, %v, want %q", line, err, want)
		}
	}
	if _, err := lr.next(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

// TestLineReaderReusesBuffers: a connection's requests, one read each,
// allocate about their own bytes, not a new 64 KB read buffer apiece
// (every served run's request made and cleared one).
func TestLineReaderReusesBuffers(t *testing.T) {
	const n = 100
	line := `{"op":"run","req":"r1","run":{"id":"a1","command":["/usr/bin/true"],"cwd":"/work/x","tmp_root":"/tmp"},"stdio":3,"names":"keyword"}` + "\n"
	cases := []struct {
		name string
		lr   func(t *testing.T) (*lineReader, func())
	}{
		{"stream", func(t *testing.T) (*lineReader, func()) {
			return newLineReader(lines(line)), func() {}
		}},
		{"socket", func(t *testing.T) (*lineReader, func()) {
			srv, cli := socketPair(t)
			return newLineReader(srv), func() {
				if _, err := unix.Write(cli, []byte(line)); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lr, send := c.lr(t)
			read := func() {
				send()
				if got, err := lr.next(); err != nil || string(got)+"\n" != line {
					t.Fatalf("next() = %q, %v, want the line", got, err)
				}
			}
			read()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range n {
				read()
			}
			runtime.ReadMemStats(&after)
			if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 4<<10 {
				t.Errorf("reading a %d-byte request line allocated %d bytes, want at most 4 KB", len(line), per)
			}
		})
	}
}
