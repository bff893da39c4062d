// Package sysnum reads the system call numbers of an architecture as
// golang.org/x/sys/unix names them: its zsysnum_linux_<arch>.go files,
// generated from the kernel's headers, in the version go.mod pins.
//
// The generator (seccomp/internal/gen) and the rules tests use it: the
// first to tell every number the rules table classifies from the numbers
// it does not (denied with ENOSYS), the second to fail when an x/sys
// upgrade names a syscall the table has not classified. The jail itself
// never links it: it runs the go command to find the module. ExampleRead
// (compiled with the tests):
//
//	nums, err := sysnum.Read("arm64") // {"read": 63, "write": 64, ...}
package sysnum

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Module is the module whose SYS_* constants are read.
const Module = "golang.org/x/sys"

// Dir returns the directory of the x/sys version the main module pins, as
// `go list -m` reports it from the current directory (which must be inside
// the module, as it is for go generate and go test).
func Dir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", Module)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("find %s: go list -m: %w: %s", Module, err, strings.TrimSpace(stderr.String()))
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("find %s: go list -m gave no directory (run go mod download %s)", Module, Module)
	}
	return dir, nil
}

// Read returns the syscall numbers of GOARCH arch by name, the name being
// the constant's without SYS_, in lower case (SYS_OPEN_TREE_ATTR:
// "open_tree_attr").
func Read(arch string) (map[string]uint32, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "unix", "zsysnum_linux_"+arch+".go")
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read syscall numbers of %s: %w", arch, err)
	}
	nums, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	return nums, nil
}

// Parse reads the lines "SYS_NAME = number" of a zsysnum file.
func Parse(src []byte) (map[string]uint32, error) {
	nums := map[string]uint32{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		name, value, ok := strings.Cut(sc.Text(), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || !strings.HasPrefix(name, "SYS_") {
			continue
		}
		n, err := strconv.ParseUint(value, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: number %q: %w", line, name, value, err)
		}
		key := strings.ToLower(strings.TrimPrefix(name, "SYS_"))
		if _, dup := nums[key]; dup {
			return nil, fmt.Errorf("line %d: %s defined twice", line, name)
		}
		nums[key] = uint32(n)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(nums) == 0 {
		return nil, errors.New("no SYS_ constants")
	}
	return nums, nil
}
