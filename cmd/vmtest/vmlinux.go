package main

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// Offsets in the bzImage header (Documentation/arch/x86/boot.rst).
const (
	hdrSetupSects    = 0x1f1 // u8: 512-byte setup sectors after the boot sector; 0 means 4
	hdrMagic         = 0x202 // "HdrS"
	hdrVersion       = 0x206 // u16 boot protocol version
	hdrPayloadOffset = 0x248 // u32, protocol 2.08+: from the start of the protected-mode code
	hdrPayloadLength = 0x24c // u32
	minProtocol      = 0x0208
)

// xenElfnotePhys32Entry is the ELF note (owner "Xen") holding the 32-bit PVH
// entry point; QEMU boots an ELF -kernel through it. Kernels without
// CONFIG_PVH lack it and cannot be booted this way.
const xenElfnotePhys32Entry = 18

// errNotBzImage is wrapped by every extraction error about the input file.
var errNotBzImage = errors.New("not a usable bzImage")

// decompressor is one compression the kernel build may use for its payload.
type decompressor struct {
	name  string
	magic []byte
	// withSize: the kernel build appends the uncompressed size (u32 LE) after
	// the stream (cmd_*_with_size); gzip carries it in its own trailer.
	withSize bool
	tool     []string // external decompressor reading stdin, if not in Go's library
}

var decompressors = []decompressor{
	{name: "gzip", magic: []byte{0x1f, 0x8b}},
	{name: "xz", magic: []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}, withSize: true, tool: []string{"xz", "-dc"}},
	{name: "zstd", magic: []byte{0x28, 0xb5, 0x2f, 0xfd}, withSize: true, tool: []string{"zstd", "-dc"}},
	{name: "bzip2", magic: []byte("BZh"), withSize: true},
	{name: "lzma", magic: []byte{0x5d, 0x00, 0x00}, withSize: true, tool: []string{"xz", "--format=lzma", "-dc"}},
}

// extractVmlinux returns the uncompressed ELF kernel inside a bzImage. It
// reads the payload's place from the header rather than scanning for magic
// numbers (scripts/extract-vmlinux does that), so a stray magic in the setup
// code cannot fool it, then checks the result: an ELF whose size matches the
// one the build recorded, with a PVH entry note.
func extractVmlinux(bz []byte) ([]byte, string, error) {
	if len(bz) < hdrPayloadLength+4 || string(bz[hdrMagic:hdrMagic+4]) != "HdrS" {
		return nil, "", fmt.Errorf("%w: no HdrS boot header", errNotBzImage)
	}
	if v := binary.LittleEndian.Uint16(bz[hdrVersion:]); v < minProtocol {
		return nil, "", fmt.Errorf("%w: boot protocol %#x has no payload fields (want >= %#x)", errNotBzImage, v, minProtocol)
	}
	setup := int(bz[hdrSetupSects])
	if setup == 0 {
		setup = 4
	}
	start := (setup+1)*512 + int(binary.LittleEndian.Uint32(bz[hdrPayloadOffset:]))
	end := start + int(binary.LittleEndian.Uint32(bz[hdrPayloadLength:]))
	if start >= end || end > len(bz) || end-start < 8 {
		return nil, "", fmt.Errorf("%w: payload [%d, %d) outside the file's %d bytes", errNotBzImage, start, end, len(bz))
	}
	payload := bz[start:end]
	want := binary.LittleEndian.Uint32(payload[len(payload)-4:])
	for _, d := range decompressors {
		if !bytes.HasPrefix(payload, d.magic) {
			continue
		}
		stream := payload
		if d.withSize {
			stream = payload[:len(payload)-4]
		}
		out, err := d.decompress(stream)
		if err != nil {
			return nil, d.name, fmt.Errorf("decompress %s payload: %w", d.name, err)
		}
		if uint32(len(out)) != want {
			return nil, d.name, fmt.Errorf("%w: %s payload gave %d bytes, header says %d", errNotBzImage, d.name, len(out), want)
		}
		if err := checkPVH(out); err != nil {
			return nil, d.name, err
		}
		return out, d.name, nil
	}
	return nil, "", fmt.Errorf("%w: payload starts with % x, no known compression", errNotBzImage, payload[:6])
}

func (d decompressor) decompress(stream []byte) ([]byte, error) {
	switch {
	case d.name == "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(stream))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	case d.name == "bzip2":
		return io.ReadAll(bzip2.NewReader(bytes.NewReader(stream)))
	}
	if _, err := exec.LookPath(d.tool[0]); err != nil {
		return nil, fmt.Errorf("%s is needed for a %s-compressed kernel (apt-get install %s): %w", d.tool[0], d.name, map[string]string{"xz": "xz-utils", "zstd": "zstd"}[d.tool[0]], err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(d.tool[0], d.tool[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stream), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %w: %s", d.tool, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

// checkPVH verifies that img is an ELF kernel with a PVH entry note.
func checkPVH(img []byte) error {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return fmt.Errorf("%w: payload is not ELF: %w", errNotBzImage, err)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		notes, err := io.ReadAll(p.Open())
		if err != nil {
			return fmt.Errorf("%w: read ELF notes: %w", errNotBzImage, err)
		}
		if hasNote(notes, "Xen", xenElfnotePhys32Entry) {
			return nil
		}
	}
	return fmt.Errorf("%w: vmlinux has no PVH entry note (kernel built without CONFIG_PVH)", errNotBzImage)
}

// hasNote walks ELF notes: namesz, descsz, type, then name and desc, each
// padded to 4 bytes.
func hasNote(b []byte, name string, typ uint32) bool {
	for len(b) >= 12 {
		namesz := int(binary.LittleEndian.Uint32(b))
		descsz := int(binary.LittleEndian.Uint32(b[4:]))
		t := binary.LittleEndian.Uint32(b[8:])
		n := 12 + align4(namesz) + align4(descsz)
		if namesz < 0 || descsz < 0 || n > len(b) || n < 12 {
			return false
		}
		if t == typ && string(bytes.TrimRight(b[12:12+namesz], "\x00")) == name {
			return true
		}
		b = b[n:]
	}
	return false
}

func align4(n int) int { return (n + 3) &^ 3 }

// cachedVmlinux extracts k's vmlinux once into cache/<release>/vmlinux.
func cachedVmlinux(k Kernel, cache string) (string, error) {
	out := filepath.Join(cache, k.Release, "vmlinux")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	bz, err := os.ReadFile(k.Vmlinuz)
	if err != nil {
		return "", fmt.Errorf("read kernel image: %w", err)
	}
	img, _, err := extractVmlinux(bz)
	if err != nil {
		return "", fmt.Errorf("extract vmlinux from %s: %w", k.Vmlinuz, err)
	}
	if err := writeAtomic(out, img, 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// writeAtomic writes b to path through a temporary file and a rename, so that
// concurrent runners never see half a cache entry.
func writeAtomic(path string, b []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create cache dir: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("chmod %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("install %s: %w", path, err)
	}
	return nil
}
