package hostcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/childmode"
	"github.com/scidex/scidex-jail/landlock"
	"github.com/scidex/scidex-jail/seccomp"
)

// Security is what the probe child found, sent to the parent as JSON.
type Security struct {
	Landlock LandlockFinding `json:"landlock"`
	Seccomp  SeccompFinding  `json:"seccomp"`
}

// LandlockFinding is what Landlock enforced in the probe child.
type LandlockFinding struct {
	ABI      int      `json:"abi"`
	Required int      `json:"required"`
	Lost     []string `json:"lost"`
	Err      string   `json:"err"`  // Restrict failed: why
	Hint     string   `json:"hint"` // how to get what was missing
	Tried    []string `json:"tried"`
	Failed   []string `json:"failed"` // tries that did not see the denial
}

// SeccompFinding is what the seccomp filter did in the probe child.
type SeccompFinding struct {
	Policy string   `json:"policy"`
	Arch   string   `json:"arch"`
	Insns  int      `json:"insns"`
	SHA256 string   `json:"sha256"`
	Err    string   `json:"err"`
	Fix    string   `json:"fix"`
	Tried  []string `json:"tried"`
	Failed []string `json:"failed"`
}

// ProbeSecurity re-executes this binary (/proc/self/exe) as the probe
// child (childmode.Probe: its main must call [SecurityChild] when
// childmode.Of(os.Args) says so), and hands it sec on stdin, the config
// the init would get; a child that could not report is recorded as an
// error of both layers.
func ProbeSecurity(sec jail.SecurityConfig) Security {
	args := childmode.Probe.Argv()
	var sp Security
	in, err := json.Marshal(sec)
	if err != nil {
		msg := fmt.Sprintf("bug: encode the plan's security config: %v", err)
		sp.Landlock.Err, sp.Seccomp.Err = msg, msg
		return sp
	}
	var out, errb bytes.Buffer
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: args, Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errb,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: unix.SIGKILL}}
	err = cmd.Run()
	if err == nil {
		err = json.Unmarshal(out.Bytes(), &sp)
	}
	if err != nil {
		msg := fmt.Sprintf("probe child (%s): %v: %s", childmode.Probe, err, strings.TrimSpace(errb.String()))
		sp.Landlock.Err, sp.Seccomp.Err = msg, msg
	}
	return sp
}

// SecurityChild is the probe child: it applies the Landlock and seccomp
// policies of the config read from r to this process the way the init does
// (no_new_privs, Landlock, seccomp last), tries that each one denies what
// it should, and reports a [Security] as JSON on w. The process cannot
// shed them: it should exit once SecurityChild returns.
func SecurityChild(r io.Reader, w io.Writer) error {
	var sec jail.SecurityConfig
	if err := json.NewDecoder(r).Decode(&sec); err != nil {
		return fmt.Errorf("check: read the security config: %w", err)
	}
	var sp Security
	if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		return fmt.Errorf("check: set no_new_privs: %w", e)
	}
	if sec.Landlock != nil {
		probeLandlock(sec.Landlock, &sp.Landlock)
	}
	if sec.Seccomp != nil {
		probeSeccomp(sec.Seccomp, &sp.Seccomp)
	}
	return json.NewEncoder(w).Encode(sp)
}

// probeLandlock applies pol as the init would: whatever this kernel's
// Landlock offers, down to the ABI the promises were decided on.
func probeLandlock(pol *landlock.Policy, ll *LandlockFinding) {
	res, err := pol.Restrict()
	ll.ABI, ll.Required, ll.Lost = res.ABI, res.Required, res.Degraded
	var ue *landlock.UnsupportedError
	switch {
	case err != nil && errors.As(err, &ue):
		ll.Err, ll.Hint = ue.Finding(), ue.Fix()
	case err != nil:
		ll.Err = err.Error()
	case res.ABI == 0:
		if _, err := landlock.ProbeABI(); errors.As(err, &ue) {
			ll.Err, ll.Hint = ue.Finding(), ue.Fix()
		} else {
			ll.Err = "this kernel has no Landlock"
		}
	default:
		// Landlock denies even root; the parent is outside the domain.
		_, err := os.ReadDir("/etc")
		tried(&ll.Tried, &ll.Failed, "list /etc", err, unix.EACCES)
		if res.ABI >= 6 {
			tried(&ll.Tried, &ll.Failed, "signal the parent", unix.Kill(os.Getppid(), 0), unix.EPERM)
		}
		if pol.HandleTCP && res.ABI >= 4 {
			tried(&ll.Tried, &ll.Failed, "TCP bind", bindTCP(), unix.EACCES)
		}
	}
}

// probeSeccomp loads the plan's filter and tries a call it refuses in
// every network mode.
func probeSeccomp(pol *seccomp.Policy, sc *SeccompFinding) {
	sc.Policy = pol.String()
	prog, err := seccomp.Lookup(*pol)
	if err == nil {
		sc.Arch, sc.Insns, sc.SHA256 = prog.Arch, len(prog.Filter), prog.SHA256
		err = prog.Load()
	}
	var se *seccomp.UnsupportedError
	switch {
	case errors.As(err, &se):
		sc.Err, sc.Fix = se.Feature+" unavailable: "+se.Found, se.Fix
	case err != nil:
		sc.Err = err.Error()
	default:
		status, err := os.ReadFile("/proc/self/status")
		if err == nil && !bytes.Contains(status, []byte("\nSeccomp:\t2\n")) {
			err = fmt.Errorf("/proc/self/status does not show seccomp filter mode 2")
		}
		tried(&sc.Tried, &sc.Failed, "filter mode in /proc/self/status", err, nil)
		// Refused in every network mode; root without a filter gets a socket.
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err == nil {
			unix.Close(fd)
		}
		tried(&sc.Tried, &sc.Failed, "socket(AF_PACKET)", err, unix.EAFNOSUPPORT)
	}
}

// bindTCP binds a TCP socket to a loopback port the kernel picks: the TCP
// rules deny bind on every port.
func bindTCP() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
}

// tried records one try: want is the error the protection should cause
// (nil: success is wanted).
func tried(ok, failed *[]string, what string, got error, want error) {
	if (want == nil && got == nil) || (want != nil && errors.Is(got, want)) {
		s := what
		if want != nil {
			s += " refused with " + unix.ErrnoName(want.(unix.Errno))
		}
		*ok = append(*ok, s)
		return
	}
	if want == nil {
		*failed = append(*failed, fmt.Sprintf("%s: %v", what, got))
		return
	}
	*failed = append(*failed, fmt.Sprintf("%s: got %v, want %s", what, errOrSuccess(got), unix.ErrnoName(want.(unix.Errno))))
}

func errOrSuccess(err error) string {
	if err == nil {
		return "success"
	}
	return err.Error()
}
