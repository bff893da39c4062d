package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/scidex/scidex-jail/cmd/vmtest/vmjob"
)

// runJob runs the command with stdout and stderr on the job share and returns
// its status the way a shell reports it: the exit code, 128+n for signal n,
// 127 when the command is not found and 126 when it cannot be executed. Only
// failures of the share itself are errors.
func runJob(job *os.Root, j vmjob.Job) (int, error) {
	stdout, err := job.Create(vmjob.StdoutFile)
	if err != nil {
		return 0, fmt.Errorf("open stdout on the job share: %w", err)
	}
	defer stdout.Close()
	stderr, err := job.Create(vmjob.StderrFile)
	if err != nil {
		return 0, fmt.Errorf("open stderr on the job share: %w", err)
	}
	defer stderr.Close()
	// exec.Command looks the name up in this process's PATH, not in Env.
	for _, kv := range j.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", v)
		}
	}
	cmd := exec.Command(j.Args[0], j.Args[1:]...)
	cmd.Env, cmd.Dir = j.Env, j.Dir
	cmd.Stdout, cmd.Stderr = stdout, stderr // *os.File: the child writes the share directly
	err = cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		ws, _ := exit.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ws.ExitStatus()
		}
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		code = 127
	default:
		code = 126
	}
	if code >= 126 && exit == nil {
		fmt.Fprintf(stderr, "vmtest-init: %v\n", err)
	}
	if err := stdout.Sync(); err != nil {
		return 0, fmt.Errorf("sync stdout: %w", err)
	}
	if err := stderr.Sync(); err != nil {
		return 0, fmt.Errorf("sync stderr: %w", err)
	}
	return code, nil
}
