//go:build linux

package landlock

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenObject: the resolved path and the type of an opened path, with
// and without symbolic links on the way (the two ways openObject takes).
func TestOpenObject(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "real/sub/file.txt", "x", 0o644)
	for _, l := range [][2]string{{"real", "link"}, {"real/sub/file.txt", "filelink"}, {"../" + filepath.Base(dir) + "/real/sub", "rel"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path, real string
		mode       fs.FileMode
	}{
		{dir + "/real", dir + "/real", fs.ModeDir},
		{dir + "/real/sub/", dir + "/real/sub", fs.ModeDir},
		{dir + "/real/sub/../sub/file.txt", dir + "/real/sub/file.txt", 0},
		{dir + "/link/sub", dir + "/real/sub", fs.ModeDir},
		{dir + "/filelink", dir + "/real/sub/file.txt", 0},
		{dir + "/rel/file.txt", dir + "/real/sub/file.txt", 0},
		{"/dev/null", "/dev/null", fs.ModeDevice | fs.ModeCharDevice},
	}
	for _, tt := range tests {
		obj, err := openObject(tt.path)
		if err != nil {
			t.Errorf("openObject(%q) = %v, want nil", tt.path, err)
			continue
		}
		closeObject(obj)
		if obj.real != tt.real || obj.mode != tt.mode || obj.fd < 0 {
			t.Errorf("openObject(%q) = real %q, mode %v, fd %d, want %q, %v, an fd", tt.path, obj.real, obj.mode, obj.fd, tt.real, tt.mode)
		}
	}
	if _, err := openObject(dir + "/missing"); !os.IsNotExist(err) {
		t.Errorf("openObject(missing) = %v, want ENOENT", err)
	}
}
