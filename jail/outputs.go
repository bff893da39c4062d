package jail

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unicode/utf8"
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
		o.setLossless()
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
// relative layout. Links and special files are never followed or copied. A
// file is created only where none exists (O_EXCL): an existing file of the
// same name is an error, never overwritten, and a copy that fails half-way
// is removed, not left looking like an output. It goes on past a failed
// file and returns every failure. dest is made if missing, and opened one
// component at a time without following links.
func collect(dir, dest string, outs []Output) []error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return []error{fmt.Errorf("open run directory %s: %w", dir, err)}
	}
	defer root.Close()
	d, err := openDirPath(dest, true)
	if err != nil {
		return []error{fmt.Errorf("create collect directory: %w", err)}
	}
	defer d.Close()
	// Through the fd just opened: no path is walked again.
	droot, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(int(d.Fd())))
	if err != nil {
		return []error{fmt.Errorf("open collect directory %s: %w", dest, err)}
	}
	defer droot.Close()
	var errs []error
	for _, o := range outs {
		if o.Type != "file" {
			continue
		}
		if err := copyOne(root, droot, o.Path); err != nil {
			errs = append(errs, fmt.Errorf("collect %s into %s: %w", strconv.Quote(o.Path), dest, err))
		}
	}
	return errs
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
	out, err := dst.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("a file of that name already exists there: not overwritten")
	}
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		dst.Remove(p)
		return err
	}
	return nil
}

// setLossless keeps names that are not UTF-8 exactly: JSON strings are
// UTF-8, so encoding/json writes such a path with U+FFFD in place of each
// bad byte, which no longer names the file and can make two names look
// alike. The exact bytes go, base64, into path_b64 (link_target_b64).
func (o *Output) setLossless() {
	if !utf8.ValidString(o.Path) {
		o.PathB64 = base64.StdEncoding.EncodeToString([]byte(o.Path))
	}
	if !utf8.ValidString(o.Target) {
		o.TargetB64 = base64.StdEncoding.EncodeToString([]byte(o.Target))
	}
}
