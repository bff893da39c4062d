package runfiles

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestListOutputs lists run directories an analysis can leave, without a
// jail: every name exactly, in order, and every budget met with the entry
// that crossed it.
func TestListOutputs(t *testing.T) {
	big := Budget{Entries: 10_000, Bytes: 1 << 30, FileBytes: 1 << 30}
	cases := []struct {
		name  string
		make  func(t *testing.T, dir string)
		b     Budget
		paths []string // every entry, in order; nil: not checked
		over  string   // budget gone over; "" none
		at    string   // its entry
		check func(t *testing.T, outs []Output)
	}{
		{"names not UTF-8 do not end the listing", func(t *testing.T, d string) {
			mkdir(t, d, "d\xff")
			write(t, d, "d\xff/in", "x")
			write(t, d, "a.txt", "a")
			write(t, d, "z.txt", "z")
		}, big, []string{"a.txt", "d\xff", "d\xff/in", "z.txt"}, "", "", nil},
		{"pre-order, names sorted bytewise", func(t *testing.T, d string) {
			mkdir(t, d, "a")
			write(t, d, "a/b", "")
			write(t, d, "a.txt", "")
		}, big, []string{"a", "a/b", "a.txt"}, "", "", nil},
		{"255-byte names", func(t *testing.T, d string) {
			n := strings.Repeat("n", 255)
			mkdir(t, d, n)
			write(t, d, n+"/"+n, "x")
		}, big, []string{strings.Repeat("n", 255), strings.Repeat("n", 255) + "/" + strings.Repeat("n", 255)}, "", "", nil},
		{"special files listed, never opened", func(t *testing.T, d string) {
			if err := unix.Mkfifo(filepath.Join(d, "fifo"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc/shadow", filepath.Join(d, "link")); err != nil {
				t.Fatal(err)
			}
		}, big, []string{"fifo", "link"}, "", "", func(t *testing.T, outs []Output) {
			if outs[0].Type != "other" || outs[1].Type != "symlink" || outs[1].Target != "/etc/shadow" {
				t.Errorf("ListOutputs = %+v, want a fifo as other and a link with its target", outs)
			}
		}},
		{"ignored names: at any depth, never entered, not counted", func(t *testing.T, d string) {
			for _, dir := range []string{"__pycache__", "sub", "sub/.hypothesis"} {
				mkdir(t, d, dir)
			}
			for i := range 5 {
				write(t, d, fmt.Sprintf("__pycache__/m%d.pyc", i), "x")
				write(t, d, fmt.Sprintf("sub/.hypothesis/e%d", i), "x")
			}
			write(t, d, "results.csv", "r")
		}, Budget{Entries: 2, Ignore: DefaultIgnore}, []string{"results.csv", "sub"}, "", "", nil},
		{"the jail's links, while they are its own", func(t *testing.T, d string) {
			for name, target := range map[string]string{"data": "/srv/data", "docs": "/elsewhere"} {
				if err := os.Symlink(target, filepath.Join(d, name)); err != nil {
					t.Fatal(err)
				}
			}
			mkdir(t, d, "sub")
			if err := os.Symlink("/srv/data", filepath.Join(d, "sub", "data")); err != nil {
				t.Fatal(err)
			}
		}, Budget{Entries: 3, Links: map[string]string{"data": "/srv/data", "docs": "/srv/docs"}}, []string{"docs", "sub", "sub/data"}, "", "", nil},
		{"entry budget", func(t *testing.T, d string) {
			for _, n := range []string{"a", "b", "c", "d"} {
				write(t, d, n, n)
			}
		}, Budget{Entries: 3}, []string{"a", "b", "c"}, "entries", "d", nil},
		{"entry budget counts path bytes", func(t *testing.T, d string) {
			write(t, d, strings.Repeat("x", 255), "")
			mkdir(t, d, "d")
			write(t, d, "d/"+strings.Repeat("y", 255), "")
		}, Budget{Entries: 3}, []string{"d", strings.Repeat("x", 255)}, "entries", "d/" + strings.Repeat("y", 255), func(t *testing.T, outs []Output) {
			if !strings.Contains(outs[0].Skipped, "entry budget") {
				t.Errorf("d skipped = %q, want the entry budget named", outs[0].Skipped)
			}
		}},
		{"entry budget counts link targets", func(t *testing.T, d string) {
			for _, n := range []string{"a", "b", "c"} {
				if err := os.Symlink(strings.Repeat("t", 1000), filepath.Join(d, n)); err != nil {
					t.Fatal(err)
				}
			}
		}, Budget{Entries: 10}, []string{"a", "b", "c"}, "entries", "c", func(t *testing.T, outs []Output) {
			if outs[1].Target == "" || outs[2].Target != "" || !strings.Contains(outs[2].Skipped, "link target") {
				t.Errorf("ListOutputs = %+v, want a and b with their targets, c without, saying why", outs)
			}
		}},
		{"deep chain, bounded", func(t *testing.T, d string) { chain(t, d, 3000) }, Budget{Entries: 1000}, nil, "entries", "", func(t *testing.T, outs []Output) {
			var cost int64
			for _, o := range outs {
				cost += entryCost(len(o.Path))
			}
			if cost > 1000 || len(outs) < 100 {
				t.Errorf("ListOutputs: %d entries costing %d, want at most 1000 and the top of the chain listed", len(outs), cost)
			}
		}},
		{"deep chain, no budget", func(t *testing.T, d string) { chain(t, d, 3000) }, Budget{}, nil, "", "", func(t *testing.T, outs []Output) {
			if len(outs) != 3000 {
				t.Errorf("ListOutputs: %d entries, want all 3000", len(outs))
			}
		}},
		{"one file's budget", func(t *testing.T, d string) {
			sparse(t, d, "huge", 1<<40)
			write(t, d, "small", "s")
		}, Budget{FileBytes: 1 << 20}, []string{"huge", "small"}, "file_bytes", "huge", func(t *testing.T, outs []Output) {
			if outs[0].SHA256 != "" || !strings.Contains(outs[0].Skipped, "one file") || outs[1].SHA256 == "" {
				t.Errorf("ListOutputs = %+v, want huge skipped and small hashed", outs)
			}
		}},
		{"total budget, hard links each time", func(t *testing.T, d string) {
			write(t, d, "f", strings.Repeat("x", 1000))
			for _, n := range []string{"l1", "l2", "l3"} {
				if err := os.Link(filepath.Join(d, "f"), filepath.Join(d, n)); err != nil {
					t.Fatal(err)
				}
			}
		}, Budget{Bytes: 2500}, []string{"f", "l1", "l2", "l3"}, "bytes", "l2", func(t *testing.T, outs []Output) {
			if outs[1].SHA256 == "" || outs[2].SHA256 != "" || outs[3].SHA256 != "" || !outs[2].overBudget {
				t.Errorf("ListOutputs = %+v, want 2 of 4 links hashed", outs)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.make(t, dir)
			outs, over, err := ListOutputs(context.Background(), dir, c.b)
			if err != nil {
				t.Fatalf("ListOutputs(%s) error = %v", c.name, err)
			}
			if c.paths != nil {
				var got []string
				for _, o := range outs {
					got = append(got, o.Path)
				}
				if strings.Join(got, "|") != strings.Join(c.paths, "|") {
					t.Errorf("ListOutputs paths = %q, want %q", got, c.paths)
				}
			}
			switch {
			case c.over == "" && over != nil:
				t.Errorf("ListOutputs over = %+v, want none", over)
			case c.over != "" && (over == nil || over.Budget != c.over || (c.at != "" && over.Path != c.at)):
				t.Errorf("ListOutputs over = %+v, want %s at %q", over, c.over, c.at)
			}
			if c.check != nil {
				c.check(t, outs)
			}
		})
	}
}

// TestListOutputsCancelled: a cancel during a long hash ends the listing
// at once, saying so in the entry.
func TestListOutputsCancelled(t *testing.T) {
	dir := t.TempDir()
	sparse(t, dir, "huge", 1<<40)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	outs, _, err := ListOutputs(ctx, dir, Budget{})
	if err == nil || len(outs) > 1 || (len(outs) == 1 && outs[0].SHA256 != "") {
		t.Errorf("ListOutputs(cancelled) = %+v, %v, want nothing hashed and the context's error", outs, err)
	}
}

func mkdir(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sparse(t *testing.T, dir, name string, size int64) {
	t.Helper()
	if err := os.Truncate(filepath.Join(dir, name), 0); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	write(t, dir, name, "")
	if err := os.Truncate(filepath.Join(dir, name), size); err != nil {
		t.Fatal(err)
	}
}

// chain makes n nested directories "d" through fds: their path is far
// longer than PATH_MAX.
func chain(t *testing.T, dir string, n int) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_DIRECTORY|unix.O_RDONLY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
	// t.TempDir's RemoveAll cannot remove what is deeper than PATH_MAX.
	t.Cleanup(func() { removeChain(dir) })
}

func removeChain(dir string) {
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return
	}
	fds := []int{fd}
	for {
		next, err := unix.Openat(fds[len(fds)-1], "d", unix.O_DIRECTORY|unix.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			break
		}
		fds = append(fds, next)
	}
	for i := len(fds) - 1; i > 0; i-- {
		unix.Close(fds[i])
		unix.Unlinkat(fds[i-1], "d", unix.AT_REMOVEDIR)
	}
	unix.Close(fds[0])
}

// TestCollect: what was hashed is copied whole and checked; a file that
// changed after it was hashed is removed from the copy and is a failure; a
// cancel copies nothing more and says so in each entry.
func TestCollect(t *testing.T) {
	for _, c := range []struct {
		name      string
		cancelled bool
		change    bool
		wantErrs  int
		wantFile  bool
		wantSkip  string
	}{
		{"whole", false, false, 0, true, ""},
		{"changed after hashing", false, true, 1, false, ""},
		{"cancelled", true, false, 0, false, "stopped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, dest := t.TempDir(), filepath.Join(t.TempDir(), "out")
			write(t, dir, "f", strings.Repeat("x", 3000))
			outs, _, err := ListOutputs(context.Background(), dir, Budget{})
			if err != nil {
				t.Fatal(err)
			}
			if c.change {
				write(t, dir, "f", strings.Repeat("y", 3000))
			}
			ctx, cancel := context.WithCancel(context.Background())
			if c.cancelled {
				cancel()
			}
			defer cancel()
			errs := Collect(ctx, dir, dest, outs)
			_, serr := os.Stat(filepath.Join(dest, "f"))
			if len(errs) != c.wantErrs || (serr == nil) != c.wantFile || !strings.Contains(outs[0].Skipped, c.wantSkip) {
				t.Errorf("collect = %v, copied %v, skipped %q; want %d errors, copied %v, skipped holding %q", errs, serr == nil, outs[0].Skipped, c.wantErrs, c.wantFile, c.wantSkip)
			}
		})
	}
}
