// Package vmjob is the contract between the vmtest runner on the host and
// the vmtest-init program that is /init inside the VM: the job description
// and the names of the files both sides read and write.
//
// The runner creates a fresh job directory on the host and shares it
// read-write with the VM over virtio-9p under the mount tag [Tag]. The
// protocol is one round trip through that directory:
//
//	host (vmtest)                       guest (vmtest-init, PID 1)
//	  write job.json  ───────────────▶  read job.json
//	  (boot watchdog)  ◀──────────────  started: the VM is up, the command
//	                                    about to run
//	                                    run Args in Dir with Env,
//	  follow stdout, stderr  ◀───────   stdout, stderr written as produced
//	                                    (fails before the command ran:)
//	  read init-error  ◀──────────────  init-error: what failed, and why
//	  read exit  ◀────────────────────  exit: the command's status, "7\n"
//	                                    sync, reboot (QEMU exits: -no-reboot)
//
// A missing exit file means the VM died before the command finished (kernel
// panic, init crash, timeout); the runner then shows the serial console log.
// Both sides are built from this module at the same commit, so the format is
// not versioned.
package vmjob

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Tag is the 9p mount tag of the job share; HostRootTag that of the host's
// read-only root.
const (
	Tag         = "scidexjob"
	HostRootTag = "hostroot"
)

// Names of the files in the job directory.
const (
	JobFile       = "job.json"
	StdoutFile    = "stdout"
	StderrFile    = "stderr"
	ExitFile      = "exit"
	StartedFile   = "started"
	InitErrorFile = "init-error"
)

// Job is what the VM runs: a plain value the runner writes and the init reads.
type Job struct {
	Args     []string // argv; Args[0] is looked up in PATH from Env
	Env      []string // the complete environment, K=V
	Dir      string   // working directory (a host path, seen through the overlay)
	Hostname string   // the VM's hostname
	// Keep lists host paths under /tmp that stay visible although the VM
	// mounts a fresh tmpfs on /tmp: `go test -exec` hands the runner a test
	// binary in /tmp/go-build*, and its working directory may be there too.
	Keep []string
}

// Write stores j as dir/job.json.
func Write(dir string, j Job) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("encode job: %w", err)
	}
	p := filepath.Join(dir, JobFile)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return fmt.Errorf("write job %s: %w", p, err)
	}
	return nil
}

// Parse decodes the contents of job.json and checks that it names a command.
func Parse(b []byte) (Job, error) {
	var j Job
	if err := json.Unmarshal(b, &j); err != nil {
		return Job{}, fmt.Errorf("decode %s: %w", JobFile, err)
	}
	if len(j.Args) == 0 || j.Args[0] == "" {
		return Job{}, fmt.Errorf("%s names no command", JobFile)
	}
	return j, nil
}
