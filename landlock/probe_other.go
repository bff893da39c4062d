//go:build !linux

package landlock

import "errors"

// probeKernel: Landlock is a Linux security module.
func probeKernel() (kernel, error) {
	return kernel{}, &UnsupportedError{Err: errors.New("Landlock exists only on Linux")}
}
