package jail

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// listOutputs walks the run directory without following any link: regular
// files get a size and a sha256, links are listed with their target as
// text, anything else is listed by type. Files are opened through os.Root,
// so no path the target planted can lead outside the directory.
func listOutputs(dir string) ([]Output, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open run directory %s: %w", dir, err)
	}
	defer root.Close()
	out := []Output{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		o := Output{Path: p}
		switch t := d.Type(); {
		case t.IsDir():
			o.Type = "dir"
		case t&fs.ModeSymlink != 0:
			o.Type = "symlink"
			o.Target, _ = root.Readlink(p)
		case t.IsRegular():
			o.Type = "file"
			o.Size, o.SHA256, err = hashFile(root, p)
			if err != nil {
				return err
			}
		default:
			o.Type = "other"
		}
		out = append(out, o)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("list outputs in %s: %w", dir, err)
	}
	return out, nil
}

func hashFile(root *os.Root, p string) (int64, string, error) {
	f, err := openRegular(root, p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("hash %s: %w", p, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// openRegular opens p inside root and checks, on the open fd, that it is a
// regular file: a file swapped for a link or fifo in between is refused.
func openRegular(root *os.Root, p string) (*os.File, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	return f, nil
}

// collect copies the regular files among outs from dir to dest, keeping the
// relative layout. Links and special files are never followed or copied.
func collect(dir, dest string, outs []Output) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open run directory %s: %w", dir, err)
	}
	defer root.Close()
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("create collect directory %s: %w", dest, err)
	}
	droot, err := os.OpenRoot(dest)
	if err != nil {
		return fmt.Errorf("open collect directory %s: %w", dest, err)
	}
	defer droot.Close()
	for _, o := range outs {
		if o.Type != "file" {
			continue
		}
		if err := copyOne(root, droot, o.Path); err != nil {
			return fmt.Errorf("collect %s into %s: %w", o.Path, dest, err)
		}
	}
	return nil
}

func copyOne(src, dst *os.Root, p string) error {
	in, err := openRegular(src, p)
	if err != nil {
		return err
	}
	defer in.Close()
	if d := filepath.Dir(p); d != "." {
		if err := dst.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	out, err := dst.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
