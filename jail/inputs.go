package jail

import (
	"fmt"
	"path/filepath"

	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// normaliseInputs puts the resolved form of root and every ro/rw path into
// the spec, so that mounts, Landlock rules and the report all use it.
func (s *Spec) normaliseInputs() error {
	if s.Root != "" {
		root := s.From.Name(option.Root)
		if !filepath.IsAbs(s.Root) {
			return fmt.Errorf("%w: %s %q must be an absolute path", ErrBadSpec, root, s.Root)
		}
		if err := checkDir(s.Root); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadSpec, root, err)
		}
		n, err := runfiles.NormalInput(root, s.Root)
		if err != nil {
			return err
		}
		s.Root = n
	}
	for _, l := range s.hostPaths() {
		for i, p := range l.paths {
			n, err := runfiles.NormalInput(s.From.NameAt(l.row, i), p)
			if err != nil {
				return err
			}
			l.paths[i] = n
		}
	}
	return nil
}

// inputPaths are the resolved host paths the analysis reads or writes
// besides its run directory: data dirs that exist, the read-only paths
// (inputs among them), the read-write ones.
func (s *Spec) inputPaths() []string {
	var out []string
	for _, d := range s.DataDirs {
		if s.Root == "" {
			break
		}
		if n, err := filepath.EvalSymlinks(filepath.Join(s.Root, d)); err == nil {
			out = append(out, n)
		}
	}
	out = append(out, s.ReadOnly...)
	return append(out, s.ReadWrite...)
}

// resolvedTmpRoot is the tmp-root with links resolved (the tmp-root itself
// must be clean and absolute, and is used as given).
func (s *Spec) resolvedTmpRoot() string {
	if n, err := filepath.EvalSymlinks(s.TmpRoot); err == nil {
		return n
	}
	return s.TmpRoot
}

// checkDestinations checks and resolves s.Report and s.Collect
// (runfiles.CheckDestinations) against realTmp, the resolved tmp-root.
// A run with neither (a served run's report comes in its reply) has
// nothing to check, and its inputs' paths, resolved only to be compared
// with them (a walk of lstats per data dir), are not looked for.
func (s *Spec) checkDestinations(realTmp string) error {
	if s.Report == "" && s.Collect == "" {
		return nil
	}
	r, c, err := runfiles.CheckDestinations(runfiles.Destinations{
		Report: s.Report, Collect: s.Collect, CollectMerge: s.CollectMerge, ID: s.ID,
		TmpRoot: realTmp, Inputs: s.inputPaths(), From: s.From,
	})
	if err == nil {
		s.Report, s.Collect = r, c
	}
	return err
}
