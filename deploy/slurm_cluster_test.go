package deploy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cluster is a one-node Slurm cluster started by a test: munged,
// slurmctld and slurmd, each a child of the test, with configuration,
// state, sockets and logs under dir, talking over 127.0.0.1 only.
type cluster struct {
	dir  string
	conf string
	env  []string
}

// slurmConf is the cluster's slurm.conf. proctrack/linuxproc follows a
// job's processes through their parent pids, and with task/none and
// jobacct_gather/none nothing of Slurm's makes or joins a cgroup: the
// jobs stay in slurmd's cgroup, which is the test's own.
const slurmConf = `ClusterName=scidex-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[1]s/run/munge.socket
CredType=cred/munge
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool
SlurmctldPidFile=%[1]s/run/slurmctld.pid
SlurmdPidFile=%[1]s/run/slurmd.pid
SlurmctldLogFile=%[1]s/log/slurmctld.log
SlurmdLogFile=%[1]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=%[1]s/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdParameters=config_overrides
FirstJobId=%[4]d
# Longer than the jail's grace (2 s in these tests, 10 s by default), so
# Slurm's SIGKILL never cuts a jail's cleanup short.
KillWait=15
MinJobAge=3600
InactiveLimit=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=8192 State=UNKNOWN
PartitionName=scidex Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`

// startCluster starts the daemons and waits for the node to be idle. They
// are stopped, by pid, when the test ends, after every job has ended.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	requireCommands(t, map[string]string{"munged": "munge", "slurmctld": "slurmctld", "slurmd": "slurmd",
		"sbatch": "slurm-client", "scontrol": "slurm-client", "scancel": "slurm-client", "sinfo": "slurm-client"})
	c := &cluster{dir: sharedDir(t, "scidex-slurm-")}
	for _, d := range []string{"run", "state", "spool", "log", "munge"} {
		// munged wants its socket directory searchable by all, its key
		// directory private.
		mode := os.FileMode(0o755)
		if d == "munge" {
			mode = 0o700
		}
		if err := os.Mkdir(filepath.Join(c.dir, d), mode); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	for i := range key {
		key[i] = byte(rand.Uint32())
	}
	writeFile(t, filepath.Join(c.dir, "munge", "munge.key"), string(key), 0o400)
	c.conf = filepath.Join(c.dir, "slurm.conf")
	// Job ids unlike any earlier run's, so run directories of two test
	// runs never share an analysis id.
	first := 100000 + rand.IntN(800000)
	ports := freePorts(t, 2)
	writeFile(t, c.conf, fmt.Sprintf(slurmConf, c.dir, ports[0], ports[1], first), 0o644)
	c.env = append(os.Environ(), "SLURM_CONF="+c.conf)

	c.daemon(t, "munged", "-F", "--key-file="+filepath.Join(c.dir, "munge", "munge.key"),
		"--socket="+filepath.Join(c.dir, "run", "munge.socket"), "--pid-file="+filepath.Join(c.dir, "run", "munged.pid"),
		"--log-file="+filepath.Join(c.dir, "log", "munged.log"), "--seed-file="+filepath.Join(c.dir, "munge", "seed"))
	waitFor(t, 20*time.Second, "munged's socket", func() bool {
		_, err := os.Stat(filepath.Join(c.dir, "run", "munge.socket"))
		return err == nil
	})
	c.daemon(t, "slurmctld", "-D", "-f", c.conf)
	c.daemon(t, "slurmd", "-D", "-f", c.conf, "-N", "localhost")
	waitFor(t, 60*time.Second, "the node to be idle (sinfo)", func() bool {
		out, _ := c.cmd("sinfo", "-h", "-o", "%T").Output()
		return strings.TrimSpace(string(out)) == "idle"
	})
	return c
}

// daemon starts one daemon in the foreground as a child of the test and
// stops it by its pid at cleanup: SIGTERM, then SIGKILL after 15 s.
func (c *cluster) daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(c.dir, "log", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = c.env, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); log.Close() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("%s (pid %d) did not end 15 s after SIGTERM: killed", name, cmd.Process.Pid)
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(c.dir, "log", name+".out"))
			t.Logf("%s output:\n%s", name, lastLines(string(b), 30))
		}
	})
}

func (c *cluster) cmd(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = c.env
	return cmd
}

// run runs a Slurm command and returns its stdout, failing on an error.
func (c *cluster) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := c.cmd(name, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return string(out)
}

// jobs maps the array task ids of an array job to their job records
// (scontrol show job -o: JobId, JobState, ExitCode, ...).
func (c *cluster) jobs(t *testing.T, arrayID string) map[string]map[string]string {
	t.Helper()
	out := c.run(t, "scontrol", "show", "job", "-o", arrayID)
	jobs := map[string]map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		rec := map[string]string{}
		for _, f := range strings.Fields(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				rec[k] = v
			}
		}
		jobs[rec["ArrayTaskId"]] = rec
	}
	return jobs
}

// waitJobs waits until every task of the array has ended.
func (c *cluster) waitJobs(t *testing.T, arrayID string, within time.Duration) map[string]map[string]string {
	t.Helper()
	var jobs map[string]map[string]string
	waitFor(t, within, "job "+arrayID+" to end", func() bool {
		jobs = c.jobs(t, arrayID)
		for _, j := range jobs {
			switch j["JobState"] {
			case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED":
				return false
			}
		}
		return len(jobs) > 0
	})
	return jobs
}

// freePorts returns n distinct loopback ports free right now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
