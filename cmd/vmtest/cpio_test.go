package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"strconv"
	"testing"
)

// cpioEntry is one parsed newc entry.
type cpioEntry struct {
	name         string
	mode         uint32
	rdev         [2]uint32
	data         string
	headerOffset int
}

// parseCPIO is an independent newc reader for the tests: it checks the
// magic, the 4-byte alignment of every header and data block, and the
// trailer at the end.
func parseCPIO(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	off := 0
	field := func(i int) uint32 {
		v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
		if err != nil {
			t.Fatalf("entry at %d: field %d: %v", off, i, err)
		}
		return uint32(v)
	}
	for {
		if off%4 != 0 {
			t.Fatalf("entry at %d: header not 4-byte aligned", off)
		}
		if off+110 > len(b) || string(b[off:off+6]) != "070701" {
			t.Fatalf("entry at %d: no newc header", off)
		}
		mode, size, nameSize := field(1), int(field(6)), int(field(11))
		nameEnd := off + 110 + nameSize
		if nameEnd > len(b) || b[nameEnd-1] != 0 {
			t.Fatalf("entry at %d: name not NUL-terminated", off)
		}
		name := string(b[off+110 : nameEnd-1])
		data := align4(nameEnd)
		e := cpioEntry{name: name, mode: mode, rdev: [2]uint32{field(9), field(10)},
			data: string(b[data : data+size]), headerOffset: off}
		off = align4(data + size)
		if name == "TRAILER!!!" {
			if off != len(b) {
				t.Fatalf("trailer ends at %d, archive at %d", off, len(b))
			}
			return out
		}
		out = append(out, e)
	}
}

func TestCPIOWriter(t *testing.T) {
	type file struct {
		name string
		data string
	}
	tests := []struct {
		name  string
		files []file
		want  []string // "name mode data" of each entry, in order
	}{
		{"empty archive", nil, nil},
		{"file at the root", []file{{"init", "x"}},
			[]string{"init 100755 x"}},
		{"parents added once", []file{{"lib/modules/a.ko", "aa"}, {"lib/modules/bb.ko", "bbb"}, {"/lib/x", ""}},
			[]string{"lib 40755 ", "lib/modules 40755 ", "lib/modules/a.ko 100755 aa", "lib/modules/bb.ko 100755 bbb", "lib/x 100755 "}},
		{"odd sizes keep alignment", []file{{"a", "1"}, {"bc", "12"}, {"def", "123"}, {"ghij", "1234"}, {"klmno", "12345"}},
			[]string{"a 100755 1", "bc 100755 12", "def 100755 123", "ghij 100755 1234", "klmno 100755 12345"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := newCPIOWriter(&buf)
			for _, f := range tt.files {
				if err := w.File(f.name, 0o755, []byte(f.data)); err != nil {
					t.Fatalf("File(%q) = %v, want nil", f.name, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close() = %v, want nil", err)
			}
			var got []string
			for _, e := range parseCPIO(t, buf.Bytes()) {
				got = append(got, fmt.Sprintf("%s %o %s", e.name, e.mode, e.data))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("entries = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCPIOHeaderBytes(t *testing.T) {
	var buf bytes.Buffer
	w := newCPIOWriter(&buf)
	if err := w.File("ab", 0o644, []byte("xyz")); err != nil {
		t.Fatal(err)
	}
	// ino 1, mode 0100644, uid 0, gid 0, nlink 1, mtime 0, size 3, dev 0:0,
	// rdev 0:0, namesize 3, check 0; 110+3 bytes padded to 116; data to 120.
	want := "070701" + "00000001" + "000081a4" + "00000000" + "00000000" + "00000001" + "00000000" +
		"00000003" + "00000000" + "00000000" + "00000000" + "00000000" + "00000003" + "00000000" +
		"ab\x00\x00\x00\x00" + "xyz\x00"
	if got := buf.String(); got != want {
		t.Errorf("File(ab, 0644, xyz) wrote %q, want %q", got, want)
	}
}

func TestCPIOCharDevAndNames(t *testing.T) {
	var buf bytes.Buffer
	w := newCPIOWriter(&buf)
	if err := w.CharDev("dev/console", 0o600, 5, 1); err != nil {
		t.Fatalf("CharDev(dev/console) = %v, want nil", err)
	}
	if err := w.Dir("dev", fs.FileMode(0o700)); err != nil {
		t.Fatalf("Dir(dev) again = %v, want nil", err)
	}
	for _, bad := range []string{"../etc/passwd", "a/../../b", "TRAILER!!!"} {
		if err := w.File(bad, 0o644, nil); err == nil {
			t.Errorf("File(%q) = nil, want an error", bad)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	entries := parseCPIO(t, buf.Bytes())
	if len(entries) != 2 {
		t.Fatalf("entries = %+v, want dev and dev/console", entries)
	}
	if e := entries[1]; e.name != "dev/console" || e.mode != 0o020600 || e.rdev != [2]uint32{5, 1} {
		t.Errorf("CharDev entry = %+v, want dev/console mode 020600 rdev 5:1", e)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(b []byte) (int, error) {
	if f.n -= len(b); f.n < 0 {
		return 0, fmt.Errorf("disk full")
	}
	return len(b), nil
}

func TestCPIOWriteError(t *testing.T) {
	w := newCPIOWriter(&failWriter{n: 200})
	err := w.File("a", 0o644, make([]byte, 100))
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		t.Errorf("writing past a failing writer = nil, want an error")
	}
}
