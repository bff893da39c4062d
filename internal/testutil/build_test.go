package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestJailBinaryPrebuilt: $SCIDEX_JAIL_BIN and the init beside it are
// copied into a directory every uid can traverse, executable, and removed
// by cleanup.
func TestJailBinaryPrebuilt(t *testing.T) {
	src := filepath.Join(t.TempDir(), "fake-jail")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho fake\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(InitBeside(src), []byte("#!/bin/sh\necho init\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCIDEX_JAIL_BIN", src)
	bin, cleanup, err := JailBinary()
	if err != nil {
		t.Fatalf("JailBinary() = %v, want nil", err)
	}
	if out, err := exec.Command(bin).Output(); err != nil || string(out) != "fake\n" {
		t.Errorf("running the copy %s = %q, %v, want \"fake\\n\"", bin, out, err)
	}
	if out, err := exec.Command(InitBeside(bin)).Output(); err != nil || string(out) != "init\n" {
		t.Errorf("running the init's copy %s = %q, %v, want \"init\\n\"", InitBeside(bin), out, err)
	}
	if fi, err := os.Stat(filepath.Dir(bin)); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("stat %s = %v, %v, want mode 0755", filepath.Dir(bin), fi.Mode(), err)
	}
	cleanup()
	if _, err := os.Stat(filepath.Dir(bin)); !os.IsNotExist(err) {
		t.Errorf("after cleanup, stat %s = %v, want not exist", filepath.Dir(bin), err)
	}
}

func TestJailBinaryPrebuiltMissing(t *testing.T) {
	t.Setenv("SCIDEX_JAIL_BIN", filepath.Join(t.TempDir(), "none"))
	_, cleanup, err := JailBinary()
	cleanup()
	if err == nil {
		t.Errorf("JailBinary() with a missing $SCIDEX_JAIL_BIN = nil error, want one")
	}
}

// TestJailBinaryPrebuiltNoInit: a $SCIDEX_JAIL_BIN without the init beside
// it is an error, not a jail that fails every run.
func TestJailBinaryPrebuiltNoInit(t *testing.T) {
	src := filepath.Join(t.TempDir(), "fake-jail")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCIDEX_JAIL_BIN", src)
	_, cleanup, err := JailBinary()
	cleanup()
	if err == nil {
		t.Errorf("JailBinary() with no init beside $SCIDEX_JAIL_BIN = nil error, want one")
	}
}

func TestModuleRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		t.Fatalf("moduleRoot(%s) = %v, want nil", wd, err)
	}
	if want := filepath.Dir(filepath.Dir(wd)); root != want {
		t.Errorf("moduleRoot(%s) = %s, want %s", wd, root, want)
	}
	if got, err := moduleRoot("/proc/self"); err == nil {
		t.Errorf("moduleRoot(/proc/self) = %s, nil, want an error", got)
	}
}
