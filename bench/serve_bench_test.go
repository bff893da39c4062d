package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// The resident mode's targets: runs through `scidex-jail serve` (its
// Python client, scidex_jail.Server, driven by serve_pairs.py) against
// bubblewrap started by the same Python process, then a burst, and the
// idle server's memory. The counts come from the environment, not b.N: a
// benchmark measures once per process (a larger b.N reports the same
// figures again) and prints its rows at the end.
//
//	SCIDEX_SERVE_PAIRS       interleaved pairs per workload (default 100)
//	SCIDEX_SERVE_SEQUENTIAL  back-to-back runs of each side (default 1000)
//	SCIDEX_SERVE_BURST       requests at once in a burst (default 100)

const (
	// serveSlots is the burst's and the idle server's pool: --slots 8.
	serveSlots = 8
	// servePython runs the driver: Debian's, the one the package supports.
	servePython = "/usr/bin/python3"
	// serveDriver is the Python side, beside this file.
	serveDriver = "serve_pairs.py"
)

// The targets of the resident mode (issue 36; printed, never enforced).
const (
	serveTrueTarget   = 0.8  // served true / bwrap true, wall
	servePythonTarget = 0.95 // served python3 -c pass / bwrap's
	clientTrueTarget  = 0    // `run --server` true / bwrap true: printed beside them, no target
	serveRateTarget   = 1.0  // served runs per second / bwrap's, sequential
)

func serveCount(env string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
		return v
	}
	return def
}

// serveRows are the rows' names in print order; serveLines their text.
var (
	serveRows  = []string{"serve-vs-bwrap-true", "serve-vs-bwrap-python", "client-vs-bwrap-true", "serve-vs-bwrap-seq", "serve-cpu", "serve-burst", "serve-idle-memory"}
	serveLines = map[string]string{}
	// serveDone keeps each benchmark's metrics: measured once per process.
	serveDone = map[string][]serveMetric{}
)

type serveMetric struct {
	v    float64
	unit string
}

// once measures with fn the first time benchmark b runs in this process;
// afterwards (a larger b.N) it reports the same metrics again.
func once(b *testing.B, fn func(report func(v float64, unit string))) {
	if ms, ok := serveDone[b.Name()]; ok {
		for _, m := range ms {
			reportMetric(b, m.v, m.unit)
		}
		return
	}
	var ms []serveMetric
	fn(func(v float64, unit string) {
		reportMetric(b, v, unit)
		ms = append(ms, serveMetric{v, unit})
	})
	serveDone[b.Name()] = ms
}

// printServe writes the resident mode's rows, when any was measured.
func printServe() {
	if len(serveLines) == 0 {
		return
	}
	fmt.Fprintln(os.Stderr, "bench: resident mode (scidex-jail serve) against bubblewrap (A/B: median of the per-pair ratios; A through scidex_jail.Server and B by subprocess.run, from one Python process, unless the row says otherwise):")
	for _, r := range serveRows {
		if l, ok := serveLines[r]; ok {
			fmt.Fprintln(os.Stderr, "bench:   "+l)
		}
	}
}

// serveConfig is what serve_pairs.py reads (its argv[1]).
type serveConfig struct {
	Mode     string   `json:"mode"`
	Binary   string   `json:"binary"`
	TmpRoot  string   `json:"tmp_root"`
	Bwrap    []string `json:"bwrap"` // bwrapArgs without the command
	Command  []string `json:"command"`
	N        int      `json:"n"`
	IDPrefix string   `json:"id_prefix"`
	Slots    int      `json:"slots,omitempty"`
	MaxRuns  int      `json:"max_runs,omitempty"`
	Queue    int      `json:"queue,omitempty"`
	Chunk    int      `json:"chunk,omitempty"`
	Rounds   int      `json:"rounds,omitempty"`
}

// serveMsg is one line of the driver: "ready", "burst" or "result".
type serveMsg struct {
	Event string `json:"event"`
	// ready
	Server int   `json:"server"`
	Inits  []int `json:"inits"`
	// burst
	Wall      float64        `json:"wall"`
	Latencies []float64      `json:"latencies"`
	Starts    map[string]int `json:"starts"`
	Failed    int            `json:"failed"`
	// result: pairs
	Served []struct {
		Wall   float64 `json:"wall"`
		Start  string  `json:"start"`
		Phases []struct {
			Name   string `json:"name"`
			Where  string `json:"where"`
			Micros int64  `json:"us"`
		} `json:"phases"`
	} `json:"served"`
	Peer []float64 `json:"peer"`
	// CPU seconds of the server's tree over the served runs: until each
	// reply, and after it until the server idled (cleanup, a slot made).
	CPUPath  float64 `json:"cpu_path"`
	CPUAfter float64 `json:"cpu_after"`
	// result: sequential
	ServedSeconds float64 `json:"served_seconds"`
	ServedN       int     `json:"served_n"`
	PeerSeconds   float64 `json:"peer_seconds"`
	PeerN         int     `json:"peer_n"`
	// The one-shot jail's runs of the same loop (scidex-jail run).
	OneshotSeconds float64 `json:"oneshot_seconds"`
	OneshotN       int     `json:"oneshot_n"`
	// CPU seconds, summed over the chunks: the server's with its reaped
	// children's (inits, analyses), then each apart, the driver's own on
	// each side, bwrap's and the one-shot jail's process trees, the whole
	// machine's during each side's chunks (the kernel's workers too).
	CPU struct {
		Server         float64 `json:"server"`
		ServerOwn      float64 `json:"server_own"`
		ServerChildren float64 `json:"server_children"`
		ClientA        float64 `json:"client_a"`
		ClientB        float64 `json:"client_b"`
		Peer           float64 `json:"peer"`
		Oneshot        float64 `json:"oneshot"`
		MachineA       float64 `json:"machine_a"`
		MachineB       float64 `json:"machine_b"`
	} `json:"cpu"`
	// StartWalls are the served runs' walls by how each started.
	StartWalls map[string][]float64 `json:"start_walls"`
	// result: all
	Leaves []string `json:"leaves"`
	Errors []string `json:"errors"`
}

// driver is one serve_pairs.py running.
type driver struct {
	cmd    *exec.Cmd
	msgs   *bufio.Scanner
	goW    *os.File
	msgR   *os.File
	out    bytes.Buffer
	before hostState
	d      dirs
}

// startDriver starts serve_pairs.py in mode cfg.Mode with a private tmp
// root, after a snapshot of the host for the leak check.
func startDriver(b *testing.B, cfg serveConfig) *driver {
	b.Helper()
	if _, err := os.Stat(servePython); err != nil {
		b.Fatalf("%s: %v (apt-get install python3)", servePython, err)
	}
	pkg, err := filepath.Abs("../python")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pkg, "scidex_jail", "_server.py")); err != nil {
		b.Fatalf("the Python package is not at %s: %v", pkg, err)
	}
	dv := &driver{d: newDirs(b)}
	cfg.Binary, cfg.TmpRoot = jailBin, dv.d.TmpRoot
	cfg.Bwrap = bwrapArgs()
	cfg.IDPrefix = batchIDPrefix()
	if dv.before, err = snapshot(dv.d.TmpRoot); err != nil {
		b.Fatal(err)
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	msgR, msgW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	dv.cmd = exec.Command(servePython, serveDriver, string(js))
	dv.cmd.Env = append(os.Environ(), "PYTHONPATH="+pkg, "PYTHONDONTWRITEBYTECODE=1")
	dv.cmd.Stdout, dv.cmd.Stderr = &dv.out, &dv.out
	dv.cmd.ExtraFiles = []*os.File{msgW, goR}
	if err := dv.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	msgW.Close()
	goR.Close()
	dv.msgR, dv.goW = msgR, goW
	dv.msgs = bufio.NewScanner(msgR)
	dv.msgs.Buffer(make([]byte, 1<<20), 64<<20)
	b.Cleanup(func() {
		dv.goW.Close()
		dv.msgR.Close()
		if dv.cmd.ProcessState == nil {
			dv.cmd.Process.Kill()
			dv.cmd.Wait()
		}
	})
	return dv
}

// next reads the driver's next line; an error when it ended without one.
func (dv *driver) next() (*serveMsg, error) {
	if !dv.msgs.Scan() {
		err := dv.msgs.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		werr := dv.cmd.Wait()
		return nil, fmt.Errorf("serve_pairs.py ended early (%v, %v):\n%s", err, werr, dv.out.String())
	}
	m := &serveMsg{}
	if err := json.Unmarshal(dv.msgs.Bytes(), m); err != nil {
		return nil, fmt.Errorf("serve_pairs.py said %q: %w", dv.msgs.Text(), err)
	}
	return m, nil
}

// goAhead lets the driver on after a "ready".
func (dv *driver) goAhead() error {
	_, err := dv.goW.WriteString("go\n")
	return err
}

// finish reads the result, waits for the driver, and checks that every
// run succeeded and nothing was left: no run directory in the tmp root,
// no cgroup leaf the server used (named in the result) or named after our
// runs, no new scidex-* directory below a cgroup of ours that is not a
// hierarchy's root (ours alone), no new mount, no slot init alive.
func (dv *driver) finish() (*serveMsg, error) {
	m, err := dv.next()
	for err == nil && m.Event != "result" {
		m, err = dv.next()
	}
	if err != nil {
		return nil, err
	}
	dv.goW.Close()
	if err := dv.cmd.Wait(); err != nil {
		return m, fmt.Errorf("serve_pairs.py: %w\n%s", err, dv.out.String())
	}
	if len(m.Errors) > 0 {
		return m, fmt.Errorf("served runs failed:\n%s%s", joinLines(m.Errors), dv.out.String())
	}
	after, err := snapshot(dv.d.TmpRoot)
	if err != nil {
		return m, err
	}
	left := serveLeaks(dv.before, after, m.Leaves)
	for _, pid := range m.Inits {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && strings.HasPrefix(filepath.Base(exe), "scidex-jail-init") {
			left = append(left, fmt.Sprintf("slot init still alive: pid %d", pid))
		}
	}
	if len(left) > 0 {
		return m, fmt.Errorf("the server leaked:\n%s", joinLines(left))
	}
	return m, nil
}

// serveLeaks is what after has that before did not and that is ours:
// every run directory, every new mount, and the scidex-* cgroups named in
// leaves, named after our runs, or below a cgroup of ours that is not a
// hierarchy's root (only this process' tree makes leaves there).
func serveLeaks(before, after hostState, leaves []string) []string {
	var out []string
	for _, d := range after.RunDirs {
		out = append(out, "run directory left in the tmp-root: "+d)
	}
	for _, m := range added(before.Mounts, after.Mounts) {
		out = append(out, "new mount: "+m)
	}
	private := privateCgroupDirs()
	own := "scidex-" + batchIDPrefix() + "-"
	for _, c := range added(before.Cgroups, after.Cgroups) {
		base := filepath.Base(c)
		mine := slices.Contains(leaves, base) || strings.HasPrefix(base, own)
		for _, p := range private {
			mine = mine || strings.HasPrefix(c, p+"/")
		}
		if mine {
			out = append(out, "cgroup left: "+c)
		}
	}
	return out
}

// privateCgroupDirs are this process' cgroup directories that are not a
// hierarchy's root: other process trees on the host make no leaves there.
func privateCgroupDirs() []string {
	cgs, err := testutil.OwnCgroups()
	if err != nil {
		return nil
	}
	var out []string
	for _, cg := range cgs {
		if cg.Path == "/" {
			continue
		}
		out = append(out, cg.Dirs...)
	}
	return out
}
