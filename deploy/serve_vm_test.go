package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// The resident server as the platform runs it: the package's example unit
// scidex-jail-serve.service, installed as its comment says with User= the
// platform's account, started by the machine's systemd (booted as a
// container's init in the VM, as for TestVMSystemdService). A client unit
// of the test's, run as root, waits for the server's socket, connects to
// it as the account (setpriv --init-groups, as User= enters it), as root
// and as nobody, sends one run request, stops the server and looks at what
// is left; systemd then exits with the client's status.

// serveUnit is the package's example unit of the resident server.
const serveUnit = "scidex-jail-serve.service"

// serveClientUnit is the test's unit: the client, then the checks.
const serveClientUnit = "scidex-vmtest-serve-client.service"

// serveDropIn is the administrator's drop-in for the example unit: the
// account; for the test, the server's messages kept and no restart that
// would hide a failure.
const serveDropIn = `[Service]
User={{user}}
Group={{user}}
Restart=no
StandardError=file:{{w}}/serve.err
`

// serveClientUnitText is the client's unit. Wants=, not Requires=: the
// client stops the server, which must not stop the client; no After=: the
// client waits for the socket itself.
const serveClientUnitText = `[Unit]
Description=scidex-jail vmtest: a client of scidex-jail-serve
Wants=` + serveUnit + `
SuccessAction=exit
FailureAction=exit

[Service]
Type=oneshot
ExecStart=/usr/bin/python3 {{w}}/driver.py {{w}} {{user}}
StandardOutput=file:{{w}}/driver.out
StandardError=file:{{w}}/driver.err
`

// serveDriver runs as root in the container: it waits for the socket and
// the server's slots, connects as root, as nobody and as the account
// (serveClient, which sends the request), then stops the server and
// records what is left, in driver.json.
const serveDriver = `import glob, json, os, pwd, socket, subprocess, sys, time

w, user = sys.argv[1], sys.argv[2]
unit = "` + serveUnit + `"
svc = "/sys/fs/cgroup/scidex.slice/scidex-jail.slice/" + unit
sock = "/run/scidex-jail-serve/serve.sock"
acct = pwd.getpwnam(user)
state = {"svc": svc}

def save():
    with open(os.path.join(w, "driver.json"), "w") as f:
        json.dump(state, f)

def wait(what, cond, secs=300):
    end = time.monotonic() + secs
    while not cond():
        if time.monotonic() > end:
            state["timeout"] = what
            save()
            sys.exit(1)
        time.sleep(0.2)

def show():
    out = subprocess.run(["systemctl", "show", unit, "-p", "ActiveState", "-p", "Result", "-p", "MainPID",
                          "-p", "ExecMainCode", "-p", "ExecMainStatus"], capture_output=True, text=True).stdout
    return dict(l.split("=", 1) for l in out.splitlines() if "=" in l)

def cgroups():
    return sorted(os.path.relpath(d, svc) for d, _, _ in os.walk(svc) if d != svc)

def slots():
    return [c for c in cgroups() if os.path.basename(c).startswith("scidex-slot-")]

def procs_of(uid):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            st = open("/proc/%s/status" % p).read()
            cmd = open("/proc/%s/cmdline" % p).read().replace("\0", " ")
        except OSError:
            continue
        for l in st.splitlines():
            if l.startswith("Uid:") and l.split()[1] == str(uid):
                out.append("%s (%s)" % (p, cmd))
    return out

wait("the server's socket " + sock, lambda: os.path.exists(sock))
st, dst = os.stat(sock), os.stat(os.path.dirname(sock))
state["socket"] = {"mode": st.st_mode & 0o7777, "uid": st.st_uid, "dir_mode": dst.st_mode & 0o7777, "dir_uid": dst.st_uid}
# The pool fills the slots (--slots 2 by default) after the server starts.
wait("two slots ready below " + svc, lambda: len(slots()) >= 2)
s = show()
state["main_pid"] = s.get("MainPID")
state["server_cgroup"] = open("/proc/%s/cgroup" % s["MainPID"]).read().strip().removeprefix("0::")

# root may connect: it gets the hello.
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(sock)
state["root_hello"] = json.loads(c.makefile("rb").readline())
c.close()
# nobody may not.
n = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                    "import socket; socket.socket(socket.AF_UNIX).connect(%r)" % sock], capture_output=True, text=True)
state["nobody"] = {"code": n.returncode, "stderr": n.stderr.strip().splitlines()[-1:]}
# The account: one request.
r = subprocess.run(["setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "/usr/bin/python3",
                    os.path.join(w, "client.py"), sock, w], capture_output=True, text=True)
state["client"] = {"code": r.returncode, "stderr": r.stderr}
state["cgroups_running"] = cgroups()

# Stop the server; what is left.
stop = subprocess.run(["systemctl", "stop", unit], capture_output=True, text=True)
state["stop"] = {"code": stop.returncode, "stderr": stop.stderr}
state["after_stop"] = {
    "show": show(),
    "svc_cgroup_exists": os.path.exists(svc),
    "socket_dir_exists": os.path.exists(os.path.dirname(sock)),
    "run_dirs": os.listdir("/run/scidex-jail"),
    "procs": procs_of(acct.pw_uid),
}
save()
`

// serveClient is the platform's side, as the account: the hello, then
// run requests (stdio 0: the analysis' stdio is /dev/null) one after the
// other, each waited for, until one starts from a slot (at most 20): the
// slots are made for the slot profile's own shape (root /), and a run of
// another shape (its root the client's directory) starts cold and makes
// the pool follow it; then the end of its requests, and every reply until
// the server closes the connection.
const serveClient = `import json, os, socket, sys, time

sock, w = sys.argv[1], sys.argv[2]
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(sock)
r = c.makefile("rb")
hello = json.loads(r.readline())
replies = []
for i in range(1, 21):
    req = {"op": "run", "req": "svc%d" % i, "stdio": 0,
           "run": {"id": "serve-svc-a%d" % i, "cwd": w, "tmp_root": "/run/scidex-jail",
                   "limits": {"memory": "256M", "pids": "64"},
                   "command": ["/bin/sh", "-c", "echo served >out.txt"]}}
    c.sendall((json.dumps(req) + "\n").encode())
    while True:
        reply = json.loads(r.readline())
        replies.append(reply)
        if reply["event"] != "accepted":
            break
    if reply.get("report", {}).get("start") == "slot":
        break
    time.sleep(0.2)
c.shutdown(socket.SHUT_WR)
replies += [json.loads(l) for l in r]
with open(os.path.join(w, "client.json"), "w") as f:
    json.dump({"uid": os.getuid(), "groups": os.getgroups(), "hello": hello, "replies": replies}, f)
`

// TestVMServeService: in the VM, the Debian package installed, an account
// made with useradd, and the package's example unit of the resident
// server (scidex-jail-serve.service: User=, Delegate=yes,
// Slice=scidex-jail.slice, RuntimeDirectory=) started by systemd as that
// account. Its socket is 0600 in a 0700 directory of the account's; root
// and the account connect, nobody cannot; the account's run request is
// done with a report ok, started from a slot the server prepared, as the
// account, in a leaf below the unit's delegated cgroup, where the server
// moved itself into a scidex-supervisor leaf. Stopping the unit
// ends the server with exit 0, and nothing is left: no cgroup, no socket,
// no run directory, no process.
func TestVMServeService(t *testing.T) {
	mount := cgroup2Root(t)
	requireVM(t, "boots systemd, installs the Debian package and adds an account")
	requireCommands(t, map[string]string{"dpkg": "dpkg", "unshare": "util-linux", "setpriv": "util-linux",
		"/lib/systemd/systemd": "systemd", "/usr/bin/python3": "python3"})
	installPackage(t)
	a := newAccount(t, "scidexsrv", "users")

	// Outside /tmp: the container's /tmp is its own.
	w, err := os.MkdirTemp("/srv", "scidex-serve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(w) })
	if err := os.Chmod(w, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(w, a.UID, a.GID); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w, "driver.py"), serveDriver, 0o644)
	writeFile(t, filepath.Join(w, "client.py"), serveClient, 0o644)

	fill := strings.NewReplacer("{{user}}", a.Name, "{{w}}", w)
	unit := filepath.Join("/etc/systemd/system", serveUnit)
	example, err := os.ReadFile(filepath.Join("/usr/share/doc/scidex-jail/examples/systemd", serveUnit))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, unit, string(example), 0o644)
	writeFile(t, filepath.Join(unit+".d", "vmtest.conf"), fill.Replace(serveDropIn), 0o644)
	client := filepath.Join("/etc/systemd/system", serveClientUnit)
	writeFile(t, client, fill.Replace(serveClientUnitText), 0o644)
	t.Cleanup(func() { os.RemoveAll(unit + ".d"); os.Remove(unit); os.Remove(client) })

	out, code, err := bootSystemd(t, mount, "scidex-vmtest-serve", serveClientUnit)
	logs := func() string {
		var b strings.Builder
		for _, f := range []string{"driver.out", "driver.err", "serve.err"} {
			got, _ := os.ReadFile(filepath.Join(w, f))
			b.WriteString("\n" + f + ":\n" + string(got))
		}
		return b.String()
	}
	var st struct {
		Svc     string `json:"svc"`
		Timeout string `json:"timeout"`
		Socket  struct {
			Mode    int `json:"mode"`
			UID     int `json:"uid"`
			DirMode int `json:"dir_mode"`
			DirUID  int `json:"dir_uid"`
		} `json:"socket"`
		ServerCgroup string             `json:"server_cgroup"`
		RootHello    map[string]any     `json:"root_hello"`
		Nobody       struct{ Code int } `json:"nobody"`
		Client       struct {
			Code   int    `json:"code"`
			Stderr string `json:"stderr"`
		} `json:"client"`
		CgroupsRunning []string `json:"cgroups_running"`
		Stop           struct {
			Code   int    `json:"code"`
			Stderr string `json:"stderr"`
		} `json:"stop"`
		After struct {
			Show      map[string]string `json:"show"`
			SvcCgroup bool              `json:"svc_cgroup_exists"`
			SocketDir bool              `json:"socket_dir_exists"`
			RunDirs   []string          `json:"run_dirs"`
			Procs     []string          `json:"procs"`
		} `json:"after_stop"`
	}
	b, rerr := os.ReadFile(filepath.Join(w, "driver.json"))
	if rerr == nil {
		rerr = json.Unmarshal(b, &st)
	}
	if err != nil || code != 0 || rerr != nil || st.Timeout != "" {
		t.Fatalf("systemd with %s: %v (exit %d), driver.json: %v, timed out waiting for %q: %s%s\nsystemd's log:\n%s",
			serveClientUnit, err, code, rerr, st.Timeout, out, logs(), systemdLog())
	}

	// Who may connect.
	if st.Socket.Mode != 0o600 || st.Socket.UID != a.UID || st.Socket.DirMode != 0o700 || st.Socket.DirUID != a.UID {
		t.Errorf("socket mode %o uid %d in a directory of mode %o uid %d; want 0600 in a 0700 directory, both the account's (%d)",
			st.Socket.Mode, st.Socket.UID, st.Socket.DirMode, st.Socket.DirUID, a.UID)
	}
	if st.RootHello["event"] != "hello" {
		t.Errorf("root's connection got %v, want the hello", st.RootHello)
	}
	if st.Nobody.Code == 0 {
		t.Errorf("uid 65534 connected to the server's socket, want it refused")
	}
	// The server moved itself out of the unit's cgroup (into a
	// scidex-supervisor leaf), which then hands the controllers down.
	svcCgroup := "/scidex.slice/scidex-jail.slice/" + serveUnit
	// It stays there, however many leaves it makes (each beside the
	// first, directly below the unit's cgroup).
	if st.ServerCgroup != svcCgroup+"/scidex-supervisor" {
		t.Errorf("the server's cgroup is %s, want %s/scidex-supervisor; cgroups below the unit's: %v", st.ServerCgroup, svcCgroup, st.CgroupsRunning)
	}
	t.Logf("the server's cgroup: %s; cgroups below the unit's after the run: %v", st.ServerCgroup, st.CgroupsRunning)

	// The account's request and its reply.
	var cl struct {
		UID     int               `json:"uid"`
		Hello   map[string]any    `json:"hello"`
		Replies []json.RawMessage `json:"replies"`
	}
	b, err = os.ReadFile(filepath.Join(w, "client.json"))
	if err == nil {
		err = json.Unmarshal(b, &cl)
	}
	if err != nil || st.Client.Code != 0 {
		t.Fatalf("the account's client: exit %d, client.json: %v; stderr:\n%s%s", st.Client.Code, err, st.Client.Stderr, logs())
	}
	if cl.UID != a.UID || cl.Hello["event"] != "hello" || cl.Hello["protocol"] != float64(2) {
		t.Errorf("client as uid %d got hello %v; want uid %d and a hello of protocol 2", cl.UID, cl.Hello, a.UID)
	}
	var events []string
	var done struct {
		Event    string          `json:"event"`
		Req      string          `json:"req"`
		ExitCode *int            `json:"exit_code"`
		Report   json.RawMessage `json:"report"`
	}
	var want []string
	for i, raw := range cl.Replies {
		var r struct{ Event, Req string }
		json.Unmarshal(raw, &r)
		events = append(events, r.Event+" "+r.Req)
		if i%2 == 0 {
			want = append(want, fmt.Sprintf("accepted svc%d", i/2+1), fmt.Sprintf("done svc%d", i/2+1))
		}
		if r.Event == "done" {
			done.ExitCode = nil
			json.Unmarshal(raw, &done)
			if done.ExitCode == nil || *done.ExitCode != 0 {
				t.Fatalf("replies %s; want every run done with exit_code 0%s", cl.Replies, logs())
			}
		}
	}
	if len(events) == 0 || !slices.Equal(events, want) {
		t.Fatalf("replies %s; want accepted and done for each run, in turn%s", cl.Replies, logs())
	}
	t.Logf("%d run(s) until one started from a slot", len(events)/2)
	var r report.Report
	if err := json.Unmarshal(done.Report, &r); err != nil {
		t.Fatalf("done's report: %v", err)
	}
	if r.Status != report.StatusOK || r.Enforced.HostUID != a.UID {
		t.Errorf("report: status %s (%s), host uid %d; want ok as uid %d", r.Status, r.CompletionNotes, r.Enforced.HostUID, a.UID)
	}
	if r.Start != "slot" {
		t.Errorf("report.start = %q after %d runs of one shape, want slot", r.Start, len(events)/2)
	}
	if len(r.Outputs) != 1 || r.Outputs[0].Path != "out.txt" {
		t.Errorf("report outputs %+v, want [out.txt]", r.Outputs)
	}
	if cg := r.Enforced.Cgroup; cg == nil || cg.Version != 2 || len(cg.Paths) != 1 || filepath.Dir(cg.Paths[0]) != st.Svc ||
		!strings.HasPrefix(filepath.Base(cg.Paths[0]), "scidex-") {
		t.Errorf("report: enforced.cgroup = %+v, want one v2 leaf directly below %s (the unit's delegated cgroup, in scidex-jail.slice)", r.Enforced.Cgroup, st.Svc)
	} else {
		t.Logf("the run's leaf: %s", cg.Paths[0])
	}

	// Stopped: the server ended by itself on SIGTERM, and nothing is left.
	sh := st.After.Show
	if st.Stop.Code != 0 || sh["ActiveState"] != "inactive" || sh["Result"] != "success" || sh["ExecMainStatus"] != "0" {
		t.Errorf("systemctl stop %s: exit %d (%s), then %v; want inactive, success, the server's exit status 0%s",
			serveUnit, st.Stop.Code, st.Stop.Stderr, sh, logs())
	}
	if st.After.SvcCgroup || st.After.SocketDir || len(st.After.RunDirs) > 0 || len(st.After.Procs) > 0 {
		t.Errorf("left after the stop: the unit's cgroup %t, the socket's directory %t, run directories %v, processes of the account %v; want none",
			st.After.SvcCgroup, st.After.SocketDir, st.After.RunDirs, st.After.Procs)
	}
	if ps := processesOf(a.UID); len(ps) > 0 {
		t.Errorf("processes of %s left after systemd exited: %v", a.Name, ps)
	}
	if serr, _ := os.ReadFile(filepath.Join(w, "serve.err")); len(serr) > 0 {
		t.Errorf("the server's stderr: %s; want nothing (no warning)", serr)
	}
}
