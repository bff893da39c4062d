package runfiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// chunk is how much of a file is read between two looks at the context:
// about a millisecond of hashing, so a cancel is seen at once.
const chunk = 1 << 20

// openRegularAt opens name in dfd without following a link or blocking on
// a FIFO, and checks on the open fd that it is the regular file st
// describes: one swapped for a link, FIFO or device in between is refused.
func openRegularAt(dfd int, name string, st *unix.Stat_t) (*os.File, error) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	if !sameFile(fd, st) {
		unix.Close(fd)
		return nil, fmt.Errorf("it changed while it was listed")
	}
	return os.NewFile(uintptr(fd), name), nil
}

// hashExactly hashes the size bytes r holds, in chunks, looking at ctx
// between them; a file that is shorter or longer than size is an error.
func hashExactly(ctx context.Context, r io.Reader, size int64) (string, error) {
	h := sha256.New()
	if err := copyExactly(ctx, h, r, size); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyExactly copies size bytes from r to w, chunk by chunk, and checks
// that r ends there: never more than size bytes are read (plus one to see
// the end), whatever r turns out to be.
func copyExactly(ctx context.Context, w io.Writer, r io.Reader, size int64) error {
	buf := make([]byte, min(size+1, chunk))
	left := size
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.ReadFull(r, buf[:min(left, int64(len(buf)))])
		if _, werr := w.Write(buf[:n]); werr != nil {
			return werr
		}
		left -= int64(n)
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("it shrank while it was read (%d of %d bytes)", size-left, size)
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
	}
	if n, _ := r.Read(buf[:1]); n > 0 {
		return fmt.Errorf("it grew past its %d bytes while it was read", size)
	}
	return nil
}

// Collect copies the regular files among outs that were hashed from dir to
// dest, keeping the relative layout, each checked against its listed size
// and sha256 as it is copied. Links and special files are never followed
// or copied; a file the budget or an error kept from being hashed is not
// copied (its entry says why), and one skipped by an error, not a budget,
// is a failure. A file is created only where none exists (O_EXCL): an
// existing file of the same name is an error, never overwritten, and a copy
// that fails half-way is removed, not left looking like an output. It goes
// on past a failed file and returns every failure; a cancel stops it. dest
// is made if missing, and opened one component at a time without following
// links.
func Collect(ctx context.Context, dir, dest string, outs []Output) []error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return []error{fmt.Errorf("open run directory %s: %w", dir, err)}
	}
	defer root.Close()
	d, err := OpenDirPath(dest, true)
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
	for i := range outs {
		o := &outs[i]
		if o.Type != OutputFile {
			continue
		}
		if ctx.Err() != nil {
			if o.Skipped == "" {
				o.Skipped = "not copied: the post-run work was stopped first"
			}
			continue
		}
		if o.Skipped != "" {
			if !o.overBudget {
				errs = append(errs, fmt.Errorf("collect %s into %s: %s", strconv.Quote(o.Path), dest, o.Skipped))
			}
			continue
		}
		if err := copyOne(ctx, root, droot, o); err != nil {
			if ctx.Err() != nil {
				o.Skipped = "not copied: the post-run work was stopped while it was copied"
				continue
			}
			errs = append(errs, fmt.Errorf("collect %s into %s: %w", strconv.Quote(o.Path), dest, err))
		}
	}
	return errs
}

func copyOne(ctx context.Context, src, dst *os.Root, o *Output) error {
	in, err := src.OpenFile(o.Path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file any more")
	}
	if d := filepath.Dir(o.Path); d != "." {
		if err := dst.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	out, err := dst.OpenFile(o.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("a file of that name already exists there: not overwritten")
	}
	if err != nil {
		return err
	}
	h := sha256.New()
	err = copyExactly(ctx, io.MultiWriter(out, h), in, o.Size)
	if err == nil && hex.EncodeToString(h.Sum(nil)) != o.SHA256 {
		err = fmt.Errorf("it changed after it was hashed")
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		dst.Remove(o.Path)
		return err
	}
	return nil
}
