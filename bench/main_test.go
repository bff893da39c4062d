package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// jailBin is the binary under test.
var jailBin string

func TestMain(m *testing.M) {
	os.Exit(benchMain(m))
}

func benchMain(m *testing.M) int {
	if inView() {
		if err := enterView(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
	}
	cleanup, err := setupBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	defer cleanup()
	code := m.Run()
	if !inView() {
		printPairs()
		printServe()
	} else if err := leaveView(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	return code
}

// setupBinary builds the jail, or copies $SCIDEX_JAIL_BIN (what `make
// bench` just built, or a binary from another tree).
func setupBinary() (func(), error) {
	bin, cleanup, err := testutil.JailBinary()
	if err != nil {
		return cleanup, err
	}
	jailBin = bin
	return cleanup, nil
}

// variant is one configuration of the jail to benchmark.
type variant struct {
	Name  string
	Args  []string // extra flags for `run`
	Layer string   // the layer turned off, to check the report says so
}

// layers are what --unsafe-disable can turn off.
var layers = []string{"landlock", "seccomp", "cgroup"}

// variants lists "all" and then each layer switched off, and the other
// network modes.
func variants() []variant {
	vs := []variant{{Name: "all"}}
	for _, l := range layers {
		vs = append(vs, variant{Name: "no-" + l, Args: []string{"--unsafe-disable", l}, Layer: l})
	}
	for _, m := range []string{"loopback", "host"} {
		vs = append(vs, variant{Name: "net-" + m, Args: []string{"--net", m}})
	}
	return vs
}

// report is the part of the jail's JSON report the benchmarks read.
type report struct {
	Status   string    `json:"status"`
	ExitCode int       `json:"exit_code"`
	Started  time.Time `json:"started_at"` // the supervisor's first clock reading
	Enforced struct {
		Degraded []string `json:"degraded"`
	} `json:"enforced"`
	Phases []struct {
		Name   string `json:"name"`
		Where  string `json:"where"`
		Micros int64  `json:"us"`
	} `json:"phases"`
	CompletionNotes string `json:"completion_notes"`
}

// dirs is a tmp-root and a report directory for one benchmark.
type dirs struct {
	TmpRoot, Reports string
}

// newDirs makes a 0755 tmp-root (the analysis uid must traverse it, as it
// does /tmp) and a separate report directory, so that the tmp-root holds
// run directories only.
func newDirs(tb testing.TB) dirs {
	tb.Helper()
	var d dirs
	for _, p := range []*string{&d.TmpRoot, &d.Reports} {
		dir, err := os.MkdirTemp("", "scidex-bench-")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		*p = dir
	}
	return d
}

var idSeq atomic.Int64

// newID is unique within this process; runs of different processes use
// different tmp-roots.
func newID(prefix string) string { return fmt.Sprintf("%s-%d", prefix, idSeq.Add(1)) }

// jailCmd is one `scidex-jail run` ready to start; Finish reads its report.
type jailCmd struct {
	Cmd    *exec.Cmd
	ID     string
	report string
	stderr bytes.Buffer
}

func newJailCmd(d dirs, id string, extra []string, command ...string) *jailCmd {
	j := &jailCmd{ID: id, report: filepath.Join(d.Reports, id+".json")}
	args := []string{"run", "--id", id, "--tmp-root", d.TmpRoot, "--report", j.report, "--timeout", "5m"}
	args = append(append(args, extra...), "--")
	j.Cmd = exec.Command(jailBin, append(args, command...)...)
	j.Cmd.Stderr = &j.stderr
	return j
}

// Finish checks a finished run (err is what Run or Wait returned): it must
// have exited 0 with status ok, and with layer disabled, say so in the
// report.
func (j *jailCmd) Finish(runErr error, layer string) (*report, error) {
	b, err := os.ReadFile(j.report)
	os.Remove(j.report)
	if runErr != nil {
		return nil, fmt.Errorf("run %s: %w\nstderr: %s", j.ID, runErr, j.stderr.String())
	}
	if err != nil {
		return nil, fmt.Errorf("read report of %s: %w", j.ID, err)
	}
	r := &report{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("decode report of %s: %w\n%s", j.ID, err, b)
	}
	if r.Status != "ok" || r.ExitCode != 0 {
		return r, fmt.Errorf("run %s: status, exit = %s, %d, want ok, 0: %s", j.ID, r.Status, r.ExitCode, r.CompletionNotes)
	}
	if layer != "" && !strings.Contains(strings.Join(r.Enforced.Degraded, " "), layer) {
		return r, fmt.Errorf("run %s with --unsafe-disable %s: enforced.degraded = %q, want it to name %s", j.ID, layer, r.Enforced.Degraded, layer)
	}
	return r, nil
}

// errNoBwrap says what to install for the peer comparison.
var errNoBwrap = errors.New("bwrap not found: install bubblewrap (apt-get install -y bubblewrap); .ci/deps does")

// bwrapArgs is the peer's sandbox with the same shape as the jail's: every
// namespace, read-only /usr and the merged-/usr links, fresh /proc, /dev and
// /tmp.
func bwrapArgs(command ...string) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"}
	for _, l := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		if t, err := os.Readlink(l); err == nil {
			args = append(args, "--symlink", t, l)
		} else if fi, err := os.Stat(l); err == nil && fi.IsDir() {
			args = append(args, "--ro-bind", l, l)
		}
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--")
	return append(args, command...)
}
