package landlock

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/scidex/scidex-jail/internal/fspath"
	"github.com/scidex/scidex-jail/internal/wrap"
)

// An object is one path of a policy, opened once: the checks of Validate
// and the rule Restrict adds are about the same file, and each path is
// walked once, not once per check.
type object struct {
	fd   int         // O_PATH, close-on-exec; -1 where there are no such fds
	mode fs.FileMode // file type bits only
	real string      // the path with symbolic links resolved, cleaned
}

// opened are the objects of a policy's paths, in the order of its lists.
type opened []object

// close closes every object's descriptor.
func (o opened) close() {
	for _, obj := range o {
		closeObject(obj)
	}
}

// open checks p (see Validate) and opens every path of its lists, in
// order. On an error nothing stays open and the error lists every problem.
func (p Policy) open() (opened, error) {
	var (
		errs  []error
		objs  opened
		rw    []string // resolved rw paths
		inner []struct {
			tag, real string
		} // resolved ro and rx paths
	)
	for _, l := range p.lists() {
		for _, path := range l.paths {
			if !filepath.IsAbs(path) {
				errs = append(errs, errors.New("landlock: policy: "+l.tag+" "+strconv.Quote(path)+": path is not absolute"))
				continue
			}
			obj, err := openObject(path)
			if err != nil {
				errs = append(errs, wrap.Error("landlock: policy: "+l.tag+" "+strconv.Quote(path), err))
				continue
			}
			objs = append(objs, obj)
			switch l.tag {
			case "dev":
				if obj.mode&fs.ModeCharDevice == 0 && !obj.mode.IsDir() {
					errs = append(errs, errors.New("landlock: policy: dev "+strconv.Quote(path)+" is "+fspath.Kind(obj.mode)+", want a character device or a directory of them"))
				}
			case "rw":
				rw = append(rw, obj.real)
			default:
				inner = append(inner, struct{ tag, real string }{l.tag, obj.real})
			}
		}
	}
	for _, in := range inner {
		for _, outer := range rw {
			if fspath.Within(in.real, outer) {
				errs = append(errs, errors.New("landlock: policy: "+in.tag+" "+strconv.Quote(in.real)+" lies inside rw "+strconv.Quote(outer)+": Landlock grants the union of rules, so it would be writable"))
			}
		}
	}
	errs = append(errs, p.validatePorts()...)
	if p.MinABI < 0 || (p.MinABI > 0 && !p.AllowDegraded) {
		errs = append(errs, errors.New("landlock: policy: MinABI "+strconv.Itoa(p.MinABI)+": only a positive floor with AllowDegraded makes sense"))
	}
	if err := errors.Join(errs...); err != nil {
		objs.close()
		return nil, err
	}
	return objs, nil
}
