package jail

import (
	"fmt"
	"sync"

	"github.com/scidex/scidex-jail/internal/fspath"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/option"
)

// AnalysisHome is the analysis' HOME inside the jail: its per-run scratch
// space. The environment (scratchEnv), the mount view and the user
// database inside all take it from this one constant.
const AnalysisHome = protocol.AnalysisHome

// ScratchTmp is the analysis' TMPDIR, in its scratch.
const ScratchTmp = AnalysisHome + "/tmp"

// scratchEnv points HOME, TMPDIR and the caches of the usual tools into the
// scratch, so that only what the analysis writes on purpose in its working
// directory is an output. Most of these default to a place under HOME
// anyway; they are set so that a tool reading the variable, not HOME,
// finds the scratch too. The --env entries win over them.
//
// PYTHONDONTWRITEBYTECODE, not PYTHONPYCACHEPREFIX: a module the analysis
// imports from its directory would leave __pycache__/ there, an output. A
// prefix would move that, but Python then also looks for the system's
// compiled modules under the prefix only, and recompiles numpy and its
// like into the scratch on every run. A __pycache__/ a tool writes anyway
// is never an output (runfiles.DefaultIgnore).
var scratchEnv = []struct{ name, value string }{
	{"HOME", AnalysisHome},
	{"TMPDIR", ScratchTmp},
	{"XDG_CACHE_HOME", AnalysisHome + "/.cache"},
	{"XDG_CONFIG_HOME", AnalysisHome + "/.config"},
	{"XDG_DATA_HOME", AnalysisHome + "/.local/share"},
	{"XDG_STATE_HOME", AnalysisHome + "/.local/state"},
	{"MPLCONFIGDIR", AnalysisHome + "/.config/matplotlib"}, // matplotlib's config and font cache
	{"PIP_CACHE_DIR", AnalysisHome + "/.cache/pip"},
	{"NUMBA_CACHE_DIR", AnalysisHome + "/.cache/numba"}, // else beside the source, in __pycache__/
	{"HF_HOME", AnalysisHome + "/.cache/huggingface"},
	{"IPYTHONDIR", AnalysisHome + "/.ipython"},
	{"JUPYTER_CONFIG_DIR", AnalysisHome + "/.jupyter"},
	{"JUPYTER_DATA_DIR", AnalysisHome + "/.local/share/jupyter"},
	{"JUPYTER_RUNTIME_DIR", AnalysisHome + "/.local/share/jupyter/runtime"},
	// The caches of test and lint tools, else in the working directory
	// (runfiles.DefaultIgnore keeps them out of the outputs where a tool
	// has no variable, pytest's .pytest_cache/).
	{"HYPOTHESIS_STORAGE_DIRECTORY", AnalysisHome + "/.cache/hypothesis"},
	{"MYPY_CACHE_DIR", AnalysisHome + "/.cache/mypy"},
	{"RUFF_CACHE_DIR", AnalysisHome + "/.cache/ruff"},
	{"PYTHONDONTWRITEBYTECODE", "1"},
}

// keptScratchEnv is scratchEnvList made once: constants of this binary,
// appended to every run's environment (a copy, never written in place).
var keptScratchEnv = sync.OnceValue(scratchEnvList)

func scratchEnvList() []string {
	out := make([]string, len(scratchEnv))
	for i, e := range scratchEnv {
		out[i] = e.name + "=" + e.value
	}
	return out
}

// planScratch is the scratch's part of the mount view: beside the run
// directory in its budget tmpfs, or without a budget a tmpfs of its own
// no larger than the memory limit (its pages count against it anyway).
func planScratch(s *Spec, m *protocol.Mounts) {
	m.Scratch, m.ScratchTmp, m.KeepScratch = AnalysisHome, ScratchTmp, s.KeepScratch
	if s.Limits.Int(limits.Disk) == 0 && !s.KeepScratch {
		m.ScratchBytes = s.Limits.Int(limits.Memory)
	}
}

// scratchReport says in the report where the scratch was.
func scratchReport(s *Spec) string {
	switch {
	case s.KeepScratch:
		return fmt.Sprintf("%s, kept as the run directory's %s/ (listed and collected with the outputs)", AnalysisHome, protocol.ScratchKeptName)
	case s.Limits.Int(limits.Disk) > 0:
		return fmt.Sprintf("%s, in the run directory's tmpfs (counts against the disk budget); removed with the run, never an output", AnalysisHome)
	case s.Limits.Int(limits.Memory) > 0:
		return fmt.Sprintf("%s, a tmpfs of at most %d bytes (counts against the memory limit); removed with the run, never an output", AnalysisHome, s.Limits.Int(limits.Memory))
	}
	return fmt.Sprintf("%s, a tmpfs (no disk budget or memory limit: at most half the machine's memory); removed with the run, never an output", AnalysisHome)
}

// validateScratch refuses a layout that would hide the scratch or be
// hidden by it: a host path bound at, above or below AnalysisHome, or a
// tmp-root there.
func (s *Spec) validateScratch() error {
	// The path's name (row, i) is made only for a message: every
	// request's validation names none.
	check := func(row option.Row, i int, p string) error {
		if fspath.Within(p, AnalysisHome) || fspath.Within(AnalysisHome, p) {
			return fmt.Errorf("%w: %s %q would cover or be covered by the analysis' home %s (its scratch): give a path beside it", ErrBadSpec, s.From.NameAt(row, i), p, AnalysisHome)
		}
		return nil
	}
	if fspath.Within(s.TmpRoot, AnalysisHome) {
		return fmt.Errorf("%w: %s %q is inside the analysis' home %s (its scratch): give another", ErrBadSpec, s.From.Name(option.TmpRoot), s.TmpRoot, AnalysisHome)
	}
	for _, l := range s.hostPaths() {
		for i, p := range l.paths {
			if err := check(l.row, i, p); err != nil {
				return err
			}
		}
	}
	for i, d := range s.DataDirs {
		if err := check(option.DataDirs, i, s.Root+"/"+d); err != nil {
			return err
		}
	}
	return nil
}
