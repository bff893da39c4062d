package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tinyELF returns a minimal ELF64 x86-64 file with one PT_NOTE segment
// holding a note of the given owner and type.
func tinyELF(owner string, noteType uint32) []byte {
	le := binary.LittleEndian
	name := append([]byte(owner), 0)
	for len(name)%4 != 0 {
		name = append(name, 0)
	}
	note := le.AppendUint32(nil, uint32(len(owner)+1))
	note = le.AppendUint32(note, 4)
	note = le.AppendUint32(note, noteType)
	note = append(note, name...)
	note = le.AppendUint32(note, 0x1000000) // the entry address
	b := []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	b = le.AppendUint16(b, 2)  // ET_EXEC
	b = le.AppendUint16(b, 62) // EM_X86_64
	b = le.AppendUint32(b, 1)
	b = le.AppendUint64(b, 0)  // entry
	b = le.AppendUint64(b, 64) // phoff
	b = le.AppendUint64(b, 0)  // shoff
	b = le.AppendUint32(b, 0)
	b = le.AppendUint16(b, 64) // ehsize
	b = le.AppendUint16(b, 56) // phentsize
	b = le.AppendUint16(b, 1)  // phnum
	b = le.AppendUint16(b, 64) // shentsize
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint32(b, 4) // PT_NOTE
	b = le.AppendUint32(b, 4)
	b = le.AppendUint64(b, 120) // offset of the note
	b = le.AppendUint64(b, 0)
	b = le.AppendUint64(b, 0)
	b = le.AppendUint64(b, uint64(len(note)))
	b = le.AppendUint64(b, uint64(len(note)))
	b = le.AppendUint64(b, 4)
	return append(b, note...)
}

// compress returns data as the kernel build packs its payload: the stream,
// followed (except for gzip, whose trailer has it) by the uncompressed size.
func compress(t *testing.T, format string, data []byte, size uint32) []byte {
	t.Helper()
	var out []byte
	switch format {
	case "gzip":
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		return buf.Bytes()
	case "xz", "zstd":
		args := map[string][]string{"xz": {"xz", "-c", "--check=crc32"}, "zstd": {"zstd", "-c", "-q"}}[format]
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdin = bytes.NewReader(data)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v (the tests need xz-utils and zstd)", args, err)
		}
		out = b
	default:
		out = append([]byte(format), data...) // an unknown "compression"
	}
	return binary.LittleEndian.AppendUint32(out, size)
}

// bzImage wraps payload in a boot header of the given protocol version.
func bzImage(payload []byte, version uint16) []byte {
	const setupSects, payloadOffset = 1, 16
	b := make([]byte, (setupSects+1)*512+payloadOffset, 4096)
	b[hdrSetupSects] = setupSects
	copy(b[hdrMagic:], "HdrS")
	binary.LittleEndian.PutUint16(b[hdrVersion:], version)
	binary.LittleEndian.PutUint32(b[hdrPayloadOffset:], payloadOffset)
	binary.LittleEndian.PutUint32(b[hdrPayloadLength:], uint32(len(payload)))
	b = append(b, payload...)
	return append(b, "trailing setup data"...)
}

func TestExtractVmlinux(t *testing.T) {
	pvh := tinyELF("Xen", xenElfnotePhys32Entry)
	noPVH := tinyELF("Xen", 17)
	n := uint32(len(pvh))
	truncatedHeader := bzImage(compress(t, "gzip", pvh, n), 0x20f)[:0x240]
	outside := bzImage(compress(t, "gzip", pvh, n), 0x20f)
	binary.LittleEndian.PutUint32(outside[hdrPayloadLength:], 1<<20)
	tests := []struct {
		name       string
		image      []byte
		wantFormat string
		wantErr    error // nil: success; errNotBzImage; errAny: some other error
	}{
		{"gzip", bzImage(compress(t, "gzip", pvh, n), 0x20f), "gzip", nil},
		{"xz", bzImage(compress(t, "xz", pvh, n), 0x20f), "xz", nil},
		{"zstd", bzImage(compress(t, "zstd", pvh, n), 0x20f), "zstd", nil},
		{"no boot header", compress(t, "gzip", pvh, n), "", errNotBzImage},
		{"header cut short", truncatedHeader, "", errNotBzImage},
		{"protocol too old", bzImage(compress(t, "gzip", pvh, n), 0x206), "", errNotBzImage},
		{"payload outside file", outside, "", errNotBzImage},
		{"unknown compression", bzImage(compress(t, "LZ4?", pvh, n), 0x20f), "", errNotBzImage},
		{"size mismatch", bzImage(compress(t, "xz", pvh, n+1), 0x20f), "xz", errNotBzImage},
		{"not ELF", bzImage(compress(t, "gzip", []byte("hello, world"), 12), 0x20f), "gzip", errNotBzImage},
		{"no PVH note", bzImage(compress(t, "zstd", noPVH, n), 0x20f), "zstd", errNotBzImage},
		{"corrupt stream", bzImage(compress(t, "xz", pvh, n)[:40], 0x20f), "xz", errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, format, err := extractVmlinux(tt.image)
			if format != tt.wantFormat {
				t.Errorf("extractVmlinux() format = %q, want %q", format, tt.wantFormat)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("extractVmlinux() error = %v, want nil", err)
			case tt.wantErr == nil && !bytes.Equal(got, pvh):
				t.Errorf("extractVmlinux() = %d bytes, want the %d-byte ELF", len(got), len(pvh))
			case tt.wantErr == errAny && err == nil:
				t.Errorf("extractVmlinux() error = nil, want an error")
			case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Errorf("extractVmlinux() error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

var errAny = errors.New("any error")

// TestExtractRealKernels extracts every installed Debian kernel and the
// cached backports one, if any: real bzImages (xz for 6.1, zstd for 6.12).
func TestExtractRealKernels(t *testing.T) {
	images, _ := filepath.Glob("/boot/vmlinuz-*")
	cached, _ := filepath.Glob(filepath.Join(backportsRoot("/var/cache/scidex-vmtest"), "boot", "vmlinuz-*"))
	images = append(images, cached...)
	if len(images) == 0 {
		t.Skip("no /boot/vmlinuz-*: install linux-image-amd64")
	}
	for _, img := range images {
		t.Run(filepath.Base(img), func(t *testing.T) {
			bz, err := os.ReadFile(img)
			if err != nil {
				t.Fatal(err)
			}
			vmlinux, format, err := extractVmlinux(bz)
			if err != nil {
				t.Fatalf("extractVmlinux(%s) error = %v, want nil", img, err)
			}
			if len(vmlinux) < 10<<20 {
				t.Errorf("extractVmlinux(%s) = %d bytes of %s, want a kernel (> 10 MiB)", img, len(vmlinux), format)
			}
		})
	}
}

func FuzzExtractVmlinux(f *testing.F) {
	pvh := tinyELF("Xen", xenElfnotePhys32Entry)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(pvh)
	zw.Close()
	f.Add(bzImage(buf.Bytes(), 0x20f))
	f.Add(pvh)
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _, err := extractVmlinux(b)
		if err == nil && checkPVH(out) != nil {
			t.Errorf("extractVmlinux() accepted an image without PVH note")
		}
	})
}

func TestHasNote(t *testing.T) {
	le := binary.LittleEndian
	note := func(namesz, descsz, typ uint32, body string) []byte {
		b := le.AppendUint32(nil, namesz)
		b = le.AppendUint32(b, descsz)
		b = le.AppendUint32(b, typ)
		return append(b, body...)
	}
	tests := []struct {
		name  string
		notes []byte
		want  bool
	}{
		{"match", note(4, 4, 18, "Xen\x00abcd"), true},
		{"second note", append(note(4, 0, 1, "GNU\x00"), note(4, 4, 18, "Xen\x00abcd")...), true},
		{"other type", note(4, 4, 17, "Xen\x00abcd"), false},
		{"other owner", note(4, 4, 18, "Linu\x00\x00\x00\x00abcd"), false},
		{"truncated", note(4, 400, 18, "Xen\x00abcd"), false},
		{"huge sizes", note(0xffffffff, 0xffffffff, 18, "Xen\x00"), false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hasNote(tt.notes, "Xen", 18); got != tt.want {
				t.Errorf("hasNote(% x) = %v, want %v", tt.notes, got, tt.want)
			}
		})
	}
}
