//go:build !linux

package landlock

import "errors"

func applyThread(plan) error { return errors.New("landlock: restricting a thread needs Linux") }

func applyAll(plan) error { return errors.New("landlock: restricting a process needs Linux") }
