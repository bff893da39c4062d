"""The Python side of bench/serve_bench_test.go: runs through one
``scidex_jail.Server`` against bubblewrap started by the same process.

Run by the Go benchmarks (Debian's /usr/bin/python3, PYTHONPATH=<repo>/python)
as ``serve_pairs.py CONFIG``, CONFIG a JSON object (see the Go side's
serveConfig). Its messages to the benchmark are JSON lines on fd 3; it reads
the benchmark's go-ahead lines on fd 4. The analyses' stdio is this
process' own (the benchmark's buffer), for both sides alike.

Modes:
  pairs       n interleaved pairs (A B, B A, ...) of one command: a
              Server.run against subprocess.run of bwrap
  sequential  n runs of one command back to back through the server, n of
              bwrap and n one-shot `scidex-jail run`, in chunks taking
              turns: runs per second and CPU per run of each
  burst       per round: wait for the slots, say "ready", wait for the
              go-ahead, then n Server.run at once from n threads
  idle        wait for the slots, say "ready" (the benchmark samples the
              memory), wait for the go-ahead, close

Every mode ends with a "result" line, which names every cgroup leaf the
server used (from the runs' reports and the slots' inits) for the
benchmark's leak check, and any run that failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Optional

import scidex_jail

OUT = os.fdopen(3, "w", buffering=1)
IN = os.fdopen(4, "r")


def say(event: str, **fields: Any) -> None:
    OUT.write(json.dumps({"event": event, **fields}) + "\n")


def children(pid: int) -> List[int]:
    out: List[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def inits(server_pid: int) -> List[int]:
    """The server's children that are the jail's init: its slots (and the
    inits of runs going, when there are)."""
    out = []
    for c in children(server_pid):
        try:
            exe = os.readlink(f"/proc/{c}/exe")
        except OSError:
            continue
        if os.path.basename(exe).startswith("scidex-jail-init"):
            out.append(c)
    return out


def cpu_ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return -1
    return int(fields[11]) + int(fields[12])  # utime, stime


def cpu_split(pid: int) -> List[int]:
    """pid's own CPU and that of the children it reaped (utime + stime,
    cutime + cstime), in clock ticks: for the server, its own work, then
    its slots' inits (reaped at their runs' ends) with every analysis
    (each reaped by its init)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = [int(x) for x in f.read().rsplit(")", 1)[1].split()[11:15]]
    except OSError:
        return [-1, -1]
    return [fields[0] + fields[1], fields[2] + fields[3]]


def tree_ticks(pid: int) -> int:
    """The CPU of pid's whole tree, in clock ticks: its own and its reaped
    children's (cpu_split), and its live children's, theirs alike (a
    slot's init before its run, with the view it built). Read again when
    a child was reaped meanwhile (the server's reaped part moved): it
    would have been counted twice or not at all."""
    while True:
        own = cpu_split(pid)
        total = sum(own)
        for c in children(pid):
            total += sum(max(0, x) for x in cpu_split(c))
        if cpu_split(pid)[1] == own[1]:
            return total


def machine_ticks() -> int:
    """The whole machine's busy CPU (every CPU's time but idle and iowait)
    from /proc/stat, in clock ticks: with the kernel's workers (a network
    namespace's teardown, cleanup_net, runs in one), which no process of
    the run is charged for. Only a quiet machine's figure means anything."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4]


def leaves_of(pid: int) -> List[str]:
    """The scidex-* cgroup directories pid is in, by name."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    names = {line.rsplit("/", 1)[-1] for line in lines}
    return sorted(n for n in names if n.startswith("scidex-"))


class Bench:
    def __init__(self, cfg: Dict[str, Any]) -> None:
        self.cfg = cfg
        self.leaves: set[str] = set()
        self.inits_seen: set[int] = set()
        self.errors: List[str] = []
        self.lock = threading.Lock()
        opts: Dict[str, Any] = {}
        for k in ("slots", "max_runs", "queue"):
            if cfg.get(k) is not None:
                opts[k] = cfg[k]
        self.server = scidex_jail.Server(binary=cfg["binary"], tmp_root=cfg["tmp_root"], **opts)
        self.slots = cfg.get("slots") or 2  # the server's default
        self.seq = 0

    def wait_ready(self) -> List[int]:
        """Wait until the server has its slots and has been idle (no CPU
        tick in 30 ms), and note their leaves. The deadline only guards
        against a hung server; nothing is timed against it."""
        pid = self.server.pid
        assert pid is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ins = inits(pid)
            if len(ins) >= self.slots:
                t0 = cpu_ticks(pid)
                time.sleep(0.03)
                ins2 = inits(pid)
                if sorted(ins2) == sorted(ins) and cpu_ticks(pid) == t0:
                    for i in ins:
                        self.inits_seen.add(i)
                        self.leaves.update(leaves_of(i))
                    return ins
            else:
                time.sleep(0.005)
        raise RuntimeError(f"the server has {len(inits(pid))} of its {self.slots} slots after 60 s")

    def next_id(self) -> str:
        with self.lock:
            self.seq += 1
            return f"{self.cfg['id_prefix']}-{self.seq}"

    def served(self, command: List[str]) -> Optional[Dict[str, Any]]:
        """One Server.run: its wall time, how it started, its phases; None
        (and an error noted) when it failed."""
        aid = self.next_id()
        t = time.perf_counter()
        try:
            r = self.server.run(command, analysis_id=aid)
        except Exception as e:  # noqa: BLE001: every failure is the benchmark's to report
            with self.lock:
                self.errors.append(f"run {aid}: {type(e).__name__}: {e}")
            return None
        wall = time.perf_counter() - t
        raw = r.report.raw
        with self.lock:
            for p in (raw.get("cgroup") or {}).get("paths") or []:
                self.leaves.add(os.path.basename(p))
            if r.status != "ok" or r.exit_code != 0:
                self.errors.append(f"run {aid}: status {r.status}, exit {r.exit_code}: {r.completion_notes}")
                return None
        return {"wall": wall, "start": raw.get("start", ""), "phases": raw.get("phases") or []}

    def bwrap(self, command: List[str]) -> Optional[float]:
        argv = ["bwrap", *self.cfg["bwrap"], *command]
        t = time.perf_counter()
        p = subprocess.run(argv)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            with self.lock:
                self.errors.append(f"{' '.join(argv)}: exit {p.returncode}")
            return None
        return wall

    def oneshot(self, command: List[str]) -> None:
        """One `scidex-jail run` of command, no server: the jail's own
        process tree, its summary line left out. A failure is noted."""
        aid = self.next_id()
        argv = [self.cfg["binary"], "run", "--id", aid, "--tmp-root", self.cfg["tmp_root"], "--summary", "none", "--", *command]
        p = subprocess.run(argv)
        if p.returncode != 0:
            with self.lock:
                self.errors.append(f"{' '.join(argv)}: exit {p.returncode}")

    def close(self) -> Dict[str, Any]:
        # The slots made since the last look are leaves too: look again
        # before the server destroys them.
        try:
            self.wait_ready()
        except RuntimeError as e:
            self.errors.append(str(e))
        self.server.close()
        return {"leaves": sorted(self.leaves), "inits": sorted(self.inits_seen), "errors": self.errors}


def pairs(b: Bench) -> Dict[str, Any]:
    cmd = b.cfg["command"]
    b.wait_ready()
    # One of each first, unmeasured: caches.
    b.served(cmd)
    b.bwrap(cmd)
    served: List[Dict[str, Any]] = []
    peer: List[float] = []
    pid = b.server.pid
    assert pid is not None
    # The server tree's CPU per served run, in clock ticks: until the
    # run's reply (its path: the request, the init's setup, the analysis),
    # and after it until the server idles again (its cleanup, the slot the
    # refill made in its place).
    ticks = {"path": 0, "after": 0}
    for i in range(b.cfg["n"]):
        order = ("a", "b") if i % 2 == 0 else ("b", "a")
        for side in order:
            # Each side on a calm machine: the pool has refilled after
            # the last served run (a request at a calm moment finds its
            # slot), and the refill does not overlap the peer's run.
            b.wait_ready()
            if side == "a":
                t0 = tree_ticks(pid)
                s = b.served(cmd)
                t1 = tree_ticks(pid)
                b.wait_ready()
                t2 = tree_ticks(pid)
                ticks["path"] += t1 - t0
                ticks["after"] += t2 - t1
                if s is not None:
                    served.append(s)
            else:
                w = b.bwrap(cmd)
                if w is not None:
                    peer.append(w)
        if b.errors:
            break
    hz = os.sysconf("SC_CLK_TCK")
    return {"served": served, "peer": peer, "cpu_path": ticks["path"] / hz, "cpu_after": ticks["after"] / hz}


def sequential(b: Bench) -> Dict[str, Any]:
    """n runs of the command back to back on each side, in chunks: A
    through the server, B bwrap, C a one-shot `scidex-jail run` (the
    jail without a server, for its CPU per run beside the served one's)."""
    cmd, n = b.cfg["command"], b.cfg["n"]
    chunk = max(1, min(b.cfg.get("chunk") or 100, n))
    b.wait_ready()
    b.served(cmd)
    b.bwrap(cmd)
    b.oneshot(cmd)
    b.wait_ready()
    secs = {"a": 0.0, "b": 0.0, "c": 0.0}
    done = {"a": 0, "b": 0, "c": 0}
    starts: Dict[str, int] = {}
    # CPU seconds of each side: the server's own and its reaped children's
    # (its inits and analyses), this process' own (the client) on each
    # side, bwrap's and the one-shot jail's process trees, and the whole
    # machine's during each side's chunks.
    cpu = {"server": 0.0, "server_own": 0.0, "server_children": 0.0, "client_a": 0.0, "client_b": 0.0, "peer": 0.0,
           "oneshot": 0.0, "machine_a": 0.0, "machine_b": 0.0}
    # Each served run's wall, by how it started (from a slot, cold).
    walls: Dict[str, List[float]] = {}
    hz = os.sysconf("SC_CLK_TCK")
    pid = b.server.pid
    assert pid is not None
    orders = (("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b"))
    k = 0
    while min(done.values()) < n and not b.errors:
        # The sides in turn, each first once in three rounds: none always
        # follows another.
        for side in orders[k % 3]:
            todo = min(chunk, n - done[side])
            if todo <= 0:
                continue
            s0, o0, m0 = cpu_split(pid), os.times(), machine_ticks()
            t = time.perf_counter()
            for _ in range(todo):
                if side == "a":
                    s = b.served(cmd)
                    if s is not None:
                        starts[s["start"]] = starts.get(s["start"], 0) + 1
                        walls.setdefault(s["start"], []).append(s["wall"])
                elif side == "b":
                    b.bwrap(cmd)
                else:
                    b.oneshot(cmd)
            secs[side] += time.perf_counter() - t
            done[side] += todo
            o1, m1 = os.times(), machine_ticks()
            own = (o1.user - o0.user) + (o1.system - o0.system)
            reaped = (o1.children_user - o0.children_user) + (o1.children_system - o0.children_system)
            if side == "a":
                s1 = cpu_split(pid)
                cpu["server_own"] += (s1[0] - s0[0]) / hz
                cpu["server_children"] += (s1[1] - s0[1]) / hz
                cpu["server"] = cpu["server_own"] + cpu["server_children"]
                cpu["client_a"] += own
                cpu["machine_a"] += (m1 - m0) / hz
            elif side == "b":
                cpu["peer"] += reaped
                cpu["client_b"] += own
                cpu["machine_b"] += (m1 - m0) / hz
            else:
                cpu["oneshot"] += reaped
        k += 1
    return {"served_seconds": secs["a"], "served_n": done["a"], "peer_seconds": secs["b"], "peer_n": done["b"],
            "oneshot_seconds": secs["c"], "oneshot_n": done["c"], "starts": starts, "cpu": cpu, "start_walls": walls}


def burst(b: Bench) -> Dict[str, Any]:
    cmd, n = b.cfg["command"], b.cfg["n"]
    for _ in range(b.cfg.get("rounds") or 1):
        ins = b.wait_ready()
        say("ready", server=b.server.pid, inits=ins)
        if IN.readline().strip() != "go":
            break
        results: List[Optional[Dict[str, Any]]] = [None] * n
        lat = [0.0] * n
        gate = threading.Barrier(n + 1)

        def one(i: int) -> None:
            gate.wait()
            t = time.perf_counter()
            results[i] = b.served(cmd)
            lat[i] = time.perf_counter() - t

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        gate.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        starts: Dict[str, int] = {}
        for r in results:
            if r is not None:
                starts[r["start"]] = starts.get(r["start"], 0) + 1
        say("burst", wall=wall, latencies=lat, starts=starts, failed=sum(r is None for r in results))
        if b.errors:
            break
    return {}


def idle(b: Bench) -> Dict[str, Any]:
    ins = b.wait_ready()
    say("ready", server=b.server.pid, inits=ins)
    IN.readline()
    return {}


def main() -> int:
    cfg = json.loads(sys.argv[1])
    mode = {"pairs": pairs, "sequential": sequential, "burst": burst, "idle": idle}[cfg["mode"]]
    b = Bench(cfg)
    try:
        out = mode(b)
    except Exception as e:  # noqa: BLE001
        b.errors.append(f"{type(e).__name__}: {e}")
        out = {}
    out.update(b.close())
    say("result", **out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
