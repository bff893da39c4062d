//go:build !cgo

// Command gen compiles the seccomp policies into BPF with libseccomp; it
// needs cgo (see gen.go). Without cgo it only says so, so that
// CGO_ENABLED=0 go build ./... still passes.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "seccomp gen: needs cgo and libseccomp (CGO_ENABLED=1, apt-get install libseccomp-dev)")
	os.Exit(1)
}
