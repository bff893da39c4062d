"""scidex_jail.Server through the real binary (``scidex-jail serve``,
docs/serve.md): a run through the server is the run of the module
functions, with the same results and errors, and leaves nothing behind."""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, Dict, Iterator, Tuple

import pytest

import scidex_jail
from conftest import PYTHON, _own_cgroup_dirs, leftovers, new_id, wait_for, write
from scidex_jail import forge

WRITES = (
    "import sys\n"
    "print('out', sys.argv[1:])\n"
    "print('err', file=sys.stderr)\n"
    "open('r.csv', 'w').write('a,b\\n1,2\\n')\n"
)


@pytest.fixture
def tmp_root() -> Iterator[str]:
    """A tmp root of the test's own, checked empty at the end."""
    d = tempfile.mkdtemp(prefix="sj-serve-root-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def server(tmp_root: str) -> Iterator[scidex_jail.Server]:
    """A child server whose runs go to ``tmp_root``, reports validated."""
    with scidex_jail.Server(tmp_root=tmp_root, validate=True) as s:
        yield s
    assert os.listdir(tmp_root) == [], "the server left something in its tmp root"


def _same(a: scidex_jail.Result, b: scidex_jail.Result) -> None:
    assert (a.status, a.exit_code, a.signal) == (b.status, b.exit_code, b.signal), (a.completion_notes, b.completion_notes)
    assert (a.stdout, a.stderr) == (b.stdout, b.stderr)
    assert [(o.path, o.type, o.size, o.sha256) for o in a.outputs] == [(o.path, o.type, o.size, o.sha256) for o in b.outputs]
    assert a.limits["profile"] == b.limits["profile"]
    # Each run, served or not, is a host uid of its own from the same range.
    assert a.enforced["identity"]["host_ids"] == b.enforced["identity"]["host_ids"] and a.enforced["net"] == b.enforced["net"]
    assert a.enforced["host_uid"] != b.enforced["host_uid"]


@pytest.mark.parametrize(
    "code",
    [
        WRITES,
        "raise SystemExit(3)\n",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        "import sys\nfor i in range(2048):\n    sys.stdout.write('x' * 1023 + '\\n')\nsys.stderr.write('no newline')\n",
    ],
    ids=["ok", "exit3", "sigkill", "2MiB"],
)
def test_same_result_as_the_module_function(server: scidex_jail.Server, tmp_root: str, work: str, code: str) -> None:
    script = write(work, "s.py", code)
    opts: Dict[str, Any] = dict(ro=[script], stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE, memory="512M")
    aid_s, aid_m = new_id("srv"), new_id("mod")
    via_server = server.run([PYTHON, script, "x"], analysis_id=aid_s, **opts)
    via_module = scidex_jail.run([PYTHON, script, "x"], analysis_id=aid_m, tmp_root=tmp_root, **opts)
    _same(via_server, via_module)
    assert via_server.analysis_id == aid_s and via_server.report["id"] == aid_s
    assert via_server.run_dir == os.path.join(tmp_root, f"scidex-analysis-{aid_s}")
    assert leftovers(aid_s, dict(via_server.report), tmp_root) == []


def test_collect_streams_and_stdin(server: scidex_jail.Server, work: str) -> None:
    script = write(work, "s.py", WRITES)
    out = os.path.join(work, "stdout.log")
    lines: list[str] = []
    r = server.run([PYTHON, script], analysis_id=new_id("srvstream"), ro=[script], stdout=out,
                   stderr=lines.append, collect=os.path.join(work, "out"))  # fmt: skip
    assert r.status == "ok", r.completion_notes
    assert (r.stdout, r.stderr) == (None, None)
    with open(out) as f:
        assert f.read() == "out []\n"
    assert lines == ["err\n"]
    assert r.collected_to == os.path.join(work, "out") and os.path.isfile(os.path.join(work, "out", "r.csv"))
    r = server.run([PYTHON, "-c", "import sys; print(sys.stdin.read().upper())"], analysis_id=new_id("srvstdin"),
                   stdin=b"hello", stdout=scidex_jail.CAPTURE)  # fmt: skip
    assert r.stdout == "HELLO\n"
    with open(write(work, "in.txt", "from a file"), "rb") as f:
        r = server.run([PYTHON, "-c", "import sys; print(sys.stdin.read())"], analysis_id=new_id("srvstdin"),
                       stdin=f, stdout=scidex_jail.CAPTURE)  # fmt: skip
    assert r.stdout == "from a file\n"


def test_cancel_a_sleep(server: scidex_jail.Server, tmp_root: str) -> None:
    aid = new_id("srvcancel")
    run = server.start(["/bin/sleep", "30"], analysis_id=aid)
    assert isinstance(run, scidex_jail.ServerRun) and run.analysis_id == aid
    wait_for(lambda: os.path.exists(os.path.join(tmp_root, f"scidex-analysis-{aid}")), "the run directory")
    t0 = time.monotonic()
    run.cancel()
    r = run.wait(60)
    assert (r.status, r.exit_code) == ("cancelled", 143), r.completion_notes
    assert time.monotonic() - t0 < 20
    assert run.poll() and run.wait() is r
    assert leftovers(aid, dict(r.report), tmp_root) == []
    run.cancel()  # after the end: a no-op


def test_cancel_right_after_the_start_is_never_lost(server: scidex_jail.Server, tmp_root: str) -> None:
    # docs/serve.md: from the "accepted" reply, a cancel gives a report
    # (the client holds a cancel until then), as a cancel of `run` does.
    for i in range(30):
        aid = new_id(f"srvatonce{i}")
        with server.start(["/bin/sleep", "60"], analysis_id=aid) as run:
            run.cancel()
            r = run.wait(60)
        assert (r.status, r.exit_code) == ("cancelled", 143), (i, r.completion_notes)
        assert leftovers(aid, dict(r.report), tmp_root) == [], i


def test_bad_profile_is_the_same_setup_error(server: scidex_jail.Server) -> None:
    errors = []
    for run in (server.run, scidex_jail.run):
        aid = new_id("srvbadprof")
        with pytest.raises(scidex_jail.JailSetupError) as e:
            run(["/bin/true"], analysis_id=aid, profile="no-such-profile")
        assert (e.value.stage, e.value.exit_code) == ("command line", 125)
        assert leftovers(aid) == []
        errors.append(e.value.message)
    # Each names the value as it was given: the server's bad_request the
    # keyword (its field, run.profile, is data); run its flag.
    assert 'keyword profile "no-such-profile": no such profile; known: default' in errors[0], errors
    assert '--profile "no-such-profile": no such profile; known: default' in errors[1], errors


@pytest.mark.parametrize(
    "kwargs, field, keyword, says",
    [
        ({"profile": "no-such-profile"}, "run.profile", "profile", 'keyword profile "no-such-profile": no such profile'),
        ({"ro": ["/proc/self"]}, "run.read_only", "ro", 'keyword ro "/proc/self" (/proc/'),
        ({"rw": ["/sys"]}, "run.read_write", "rw", 'keyword rw "/sys" (/sys) is under /sys'),
        ({"unsafe_disable": ["nope"]}, "run.unsafe_disable", "unsafe_disable", 'keyword unsafe_disable "nope": known layers are landlock, seccomp, cgroup'),
    ],
    ids=["profile", "ro", "rw", "unsafe_disable"],
)
def test_a_bad_request_names_the_keyword(server: scidex_jail.Server, kwargs: Dict[str, Any], field: str, keyword: str, says: str) -> None:
    # Values the client passes on and the server refuses: its bad_request
    # names the keyword in its message (the request says the values are
    # keywords) and the request's field as data, which the error maps to
    # the keyword too.
    aid = new_id("srvbadreq")
    with pytest.raises(scidex_jail.BadRequestError) as e:
        server.run(["/bin/true"], analysis_id=aid, **kwargs)
    assert (e.value.field, e.value.keyword, e.value.stage, e.value.exit_code) == (field, keyword, "command line", 125), e.value
    assert isinstance(e.value, ValueError) and isinstance(e.value, scidex_jail.JailSetupError)
    assert says in e.value.message, e.value.message
    assert leftovers(aid) == []


def test_a_setup_error_is_the_reports(server: scidex_jail.Server, tmp_root: str) -> None:
    # A run that fails in its setup (an rw tree the system's rx rules lie
    # in) gets its stage from the report in the reply, as from run's file.
    stages = []
    for run in (server.run, scidex_jail.run):
        aid = new_id("srvsetup")
        with pytest.raises(scidex_jail.JailSetupError) as e:
            run(["/bin/true"], analysis_id=aid, rw=["/etc"], tmp_root=tmp_root)
        assert e.value.report is not None and e.value.exit_code == 125, e.value
        stages.append((e.value.stage, e.value.report.setup_error))
    assert stages[0] == stages[1] and stages[0][0] == "landlock", stages


@pytest.mark.parametrize("kwargs", [{"cpus": 0}, {"memory": "1M"}, {"ro": ["/nonexistent/x"]}, {"memroy": "1G"}])
def test_bad_option_is_the_same_error(server: scidex_jail.Server, kwargs: Dict[str, Any]) -> None:
    errors = []
    for run in (server.run, scidex_jail.run):
        with pytest.raises((ValueError, TypeError)) as e:
            run(["/bin/true"], analysis_id=new_id("srvbad"), **kwargs)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_many_runs_one_after_another(server: scidex_jail.Server, tmp_root: str) -> None:
    for i in range(25):
        r = server.run([PYTHON, "-c", f"print({i} * 2)"], analysis_id=new_id(f"srvseq{i}"), stdout=scidex_jail.CAPTURE)
        assert (r.status, r.stdout) == ("ok", f"{i * 2}\n"), (i, r.completion_notes)
        # The reply went before the cleanup, which leftovers waits for.
        assert r.report.cleanup == "after_reply"
        assert leftovers(r.analysis_id, dict(r.report), tmp_root) == []


def test_served_runs_read_data_by_relative_path(server: scidex_jail.Server, tmp_root: str, work: str) -> None:
    # A served run's init (a slot's, or a cold one) gets the run's config,
    # its links with it: data/ is where scripts look, a cache is no output.
    os.mkdir(os.path.join(work, "data"), 0o755)
    write(os.path.join(work, "data"), "x.csv", "a,b\n1,2\n")
    code = "print(open('data/x.csv').read(), end=''); import os; os.mkdir('__pycache__'); open('r.csv', 'w').write('r')"
    for i in range(2):
        r = server.run([PYTHON, "-c", code], analysis_id=new_id(f"srvdata{i}"), root=work, stdout=scidex_jail.CAPTURE)
        assert (r.status, r.stdout) == ("ok", "a,b\n1,2\n"), r.completion_notes
        assert [o.path for o in r.outputs] == ["r.csv"], r.outputs
        assert r.report.enforced.mounts.data_dirs[1].startswith("docs: not mounted"), r.report.enforced.mounts.data_dirs
        assert leftovers(r.analysis_id, dict(r.report), tmp_root) == []


def test_runs_at_once_from_threads(server: scidex_jail.Server) -> None:
    results: Dict[int, scidex_jail.Result] = {}

    def one(i: int) -> None:
        results[i] = server.run([PYTHON, "-c", f"print({i})"], analysis_id=new_id(f"srvpar{i}"), stdout=scidex_jail.CAPTURE)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {i: (r.status, r.stdout) for i, r in results.items()} == {i: ("ok", f"{i}\n") for i in range(8)}


def test_run_async_and_its_cancel(server: scidex_jail.Server, tmp_root: str) -> None:
    aid_ok, aid_cancel = new_id("srvasync"), new_id("srvasynccancel")

    async def main() -> Tuple[scidex_jail.Result, list[str]]:
        r = await server.run_async([PYTHON, "-c", "import sys; print(sys.stdin.read())"], analysis_id=aid_ok,
                                   stdin="piped", stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE)  # fmt: skip
        started = asyncio.Event()
        lines: list[str] = []

        def on_line(line: str) -> None:
            lines.append(line)
            started.set()

        task = asyncio.ensure_future(server.run_async(
            [PYTHON, "-c", "import time; print('started', flush=True); time.sleep(60)"],
            analysis_id=aid_cancel, stdout=on_line,
        ))  # fmt: skip
        await asyncio.wait_for(started.wait(), 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return r, lines

    r, lines = asyncio.run(main())
    assert (r.status, r.stdout, r.stderr) == ("ok", "piped\n", "")
    assert lines == ["started\n"]
    assert leftovers(aid_cancel, None, tmp_root, served=True) == []


def test_forge_through_the_server(server: scidex_jail.Server, tmp_root: str) -> None:
    aid = new_id("srvforge")
    rr = forge.run_python_script(source="print(6 * 7)\n", analysis_id=aid, server=server)
    assert (rr.returncode, rr.status, rr.stdout) == (0, "ok", "42\n"), rr.completion_notes
    assert rr.report.run_dir == os.path.join(tmp_root, f"scidex-analysis-{aid}")
    with pytest.raises(ValueError, match="not both"):
        forge.run_python_script(source="print(1)\n", analysis_id=new_id("srvforge"), server=server, binary="/bin/true")


def test_closing_cancels_what_is_going(tmp_root: str) -> None:
    aid = new_id("srvclose")
    with scidex_jail.Server(tmp_root=tmp_root, validate=True) as s:
        run = s.start(["/bin/sleep", "60"], analysis_id=aid)
        wait_for(lambda: os.path.exists(os.path.join(tmp_root, f"scidex-analysis-{aid}")), "the run directory")
    r = run.wait(0)
    assert r.status == "cancelled", r.completion_notes
    assert leftovers(aid, dict(r.report), tmp_root) == [] and os.listdir(tmp_root) == []
    with pytest.raises(scidex_jail.JailError, match="closed"):
        s.run(["/bin/true"], analysis_id=new_id("srvclosed"))


def test_over_a_socket(jail_bin: str, tmp_root: str) -> None:
    sockdir = tempfile.mkdtemp(prefix="sj-serve-sock-")
    path = os.path.join(sockdir, "serve.sock")
    proc = subprocess.Popen([jail_bin, "serve", "--socket", path, "--slots", "1"], stderr=subprocess.PIPE)
    try:
        wait_for(lambda: os.path.exists(path) or proc.poll() is not None, "the server's socket")
        assert proc.poll() is None, proc.communicate()[1]
        assert os.stat(path).st_mode & 0o777 == 0o600
        for _ in range(2):  # two connections, one after the other
            with scidex_jail.Server(socket=path, tmp_root=tmp_root, validate=True) as s:
                assert s.pid == proc.pid
                r = s.run([PYTHON, "-c", "print('hi')"], analysis_id=new_id("srvsock"), stdout=scidex_jail.CAPTURE)
                assert (r.status, r.stdout) == ("ok", "hi\n"), r.completion_notes
                aid = new_id("srvsockcancel")
                run = s.start(["/bin/sleep", "30"], analysis_id=aid)
                wait_for(lambda: os.path.exists(os.path.join(tmp_root, f"scidex-analysis-{aid}")), "the run directory")
                run.cancel()
                assert run.wait(60).status == "cancelled"
                with pytest.raises(scidex_jail.JailSetupError, match="no such profile"):
                    s.run(["/bin/true"], analysis_id=new_id("srvsock"), profile="no-such-profile")
        assert proc.poll() is None, "the server ended with a connection"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        shutil.rmtree(sockdir, ignore_errors=True)
    assert proc.returncode == 0, err
    assert os.listdir(tmp_root) == []


def test_missing_server_socket_says_where() -> None:
    with pytest.raises(scidex_jail.JailError, match="/nonexistent/serve.sock"):
        scidex_jail.Server(socket="/nonexistent/serve.sock")


def test_keyboard_interrupt_cancels_the_run(server: scidex_jail.Server, tmp_root: str) -> None:
    aid = new_id("srvsigint")

    def on_line(line: str) -> None:
        if line.startswith("started"):
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does; run() waits in the main thread

    with pytest.raises(KeyboardInterrupt):
        server.run([PYTHON, "-c", "import time; print('started', flush=True); time.sleep(60)"],
                   analysis_id=aid, stdout=on_line)  # fmt: skip
    assert leftovers(aid, None, tmp_root, served=True) == []
    r = server.run(["/bin/true"], analysis_id=new_id("srvafter"))  # the server carries on
    assert r.status == "ok", r.completion_notes


def test_a_binary_without_serve_says_so() -> None:
    with pytest.raises(scidex_jail.JailError, match="before its hello.*exited 0"):
        scidex_jail.Server(binary="/bin/true")


def test_a_server_that_dies_fails_its_runs(jail_bin: str, tmp_root: str) -> None:
    aid = new_id("srvdies")
    with scidex_jail.Server(tmp_root=tmp_root) as s:
        run = s.start(["/bin/sleep", "60"], analysis_id=aid)
        wait_for(lambda: os.path.exists(os.path.join(tmp_root, f"scidex-analysis-{aid}")), "the run directory")
        assert s.pid is not None
        os.kill(s.pid, signal.SIGKILL)
        # Accepted (its run directory exists): it may have started.
        with pytest.raises(scidex_jail.RunLostError, match="accepted and may have started.*went away.*SIGKILL.*scidex-jail gc") as e:
            run.wait(60)
        assert e.value.exit_code == 121
        with pytest.raises(scidex_jail.JailError, match="went away"):
            s.run(["/bin/true"], analysis_id=new_id("srvdead"))
        dead = s.pid
    # What a killed server leaves is gc's (docs/serve.md), once its leaves
    # are older than gc's margin (2 s) for a live jail to lock a new one.
    time.sleep(2.5)
    gc = subprocess.run([jail_bin, "gc", f"--tmp-root={tmp_root}"], capture_output=True, text=True, timeout=120)
    assert gc.returncode == 0, gc.stderr
    left = [d for c in _own_cgroup_dirs() for d in glob.glob(os.path.join(c, f"scidex-slot-{dead}-*"))]
    assert left == [] and os.listdir(tmp_root) == [], (left, os.listdir(tmp_root), gc.stdout)


def test_server_flags_queue_and_refusal(tmp_root: str) -> None:
    with scidex_jail.Server(tmp_root=tmp_root, max_runs=1, queue=1, slots=0, slot_idle=60) as s:
        aids = [new_id(f"srvq{i}") for i in range(3)]
        first = s.start(["/bin/sleep", "30"], analysis_id=aids[0])
        wait_for(lambda: os.path.exists(os.path.join(tmp_root, f"scidex-analysis-{aids[0]}")), "the first run")
        queued = s.start(["/bin/sleep", "30"], analysis_id=aids[1])
        refused = s.start(["/bin/sleep", "30"], analysis_id=aids[2])
        with pytest.raises(scidex_jail.ServerRefusedError, match="refused: 1 runs at once and 1 waiting.*try again later") as e:
            refused.wait(60)
        assert not isinstance(e.value, scidex_jail.JailSetupError), e.value
        assert (e.value.reason, e.value.exit_code) == ("queue_full", 125), e.value
        queued.cancel()
        # Cancelled while queued: a report all the same, nothing made; its
        # wait is its queued phase, and served says what it waited behind.
        q = queued.wait(60)
        assert q.status == "cancelled"
        assert q.report.served == scidex_jail.Served(max_runs=1, queue=1, running=1, queued_ahead=0)
        assert [p.name for p in q.report.phases[:2]] == ["startup", "queued"], q.report.phases
        first.cancel()
        f = first.wait(60)
        assert f.status == "cancelled" and f.report.served == scidex_jail.Served(1, 1, 0, 0)
    assert os.listdir(tmp_root) == [] and all(leftovers(a, None, tmp_root) == [] for a in aids)


@pytest.mark.unit
def test_server_flags_are_checked_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="max_runs"):
        scidex_jail.Server(binary="/bin/true", max_runs=-1)
    with pytest.raises(ValueError, match="slot_idle"):
        scidex_jail.Server(binary="/bin/true", slot_idle="soon")
    with pytest.raises(ValueError, match="flags of the server"):
        scidex_jail.Server(socket="/nonexistent/serve.sock", slots=1)


def test_callback_error_raised_after_the_run(server: scidex_jail.Server, tmp_root: str) -> None:
    aid = new_id("srvcberr")

    def boom(line: str) -> None:
        raise RuntimeError("callback bug")

    with pytest.raises(RuntimeError, match="callback bug"):
        server.run([PYTHON, "-c", "print('a'); print('b')"], analysis_id=aid, stdout=boom)
    assert leftovers(aid, None, tmp_root, served=True) == []


def test_a_new_server_sweeps_what_a_killed_one_left(tmp_root: str) -> None:
    aid = new_id("srvsweep")
    s = scidex_jail.Server(tmp_root=tmp_root, slots=1)
    run = s.start(["/bin/sleep", "60"], analysis_id=aid)
    wait_for(lambda: os.path.exists(os.path.join(tmp_root, f"scidex-analysis-{aid}")), "the run directory")
    dead = s.pid
    assert dead is not None
    os.kill(dead, signal.SIGKILL)
    with pytest.raises(scidex_jail.RunLostError):
        run.wait(60)
    s.close()
    # Left: the run's directory, and the leaves of its run and slots.
    leaves = lambda: [d for c in _own_cgroup_dirs() for pat in (f"scidex-slot-{dead}-*", f"scidex-{aid}-*") for d in glob.glob(os.path.join(c, pat))]
    assert os.listdir(tmp_root) != [] and leaves() != []
    # Older than gc's margin (2 s) for a live jail to lock a leaf it made.
    time.sleep(2.5)
    with scidex_jail.Server(tmp_root=tmp_root, slots=0) as again:
        assert os.listdir(tmp_root) == [] and leaves() == [], (os.listdir(tmp_root), leaves())
        assert again.run(["/bin/true"], analysis_id=new_id("srvsweep2")).status == "ok"


def test_a_server_without_cgroup_makes_slots_without_one(tmp_root: str) -> None:
    # serve gets --unsafe-disable=cgroup: its slots are made as its runs
    # will be, without a leaf (rootless on cgroup v1, where none can be).
    with scidex_jail.Server(tmp_root=tmp_root, slots=1, unsafe_disable=("cgroup",), stderr=scidex_jail.CAPTURE) as s:
        pid = s.pid
        starts = []
        for i in range(40):
            r = s.run(["/bin/true"], analysis_id=new_id(f"srvnocg{i}"))
            assert r.status == "ok" and r.enforced["cgroup"] is None, r.completion_notes
            starts.append(r.report.raw.get("start"))
            if starts.count("slot") >= 2:
                break
            time.sleep(0.1)
        assert starts.count("slot") >= 2, starts
        assert [d for c in _own_cgroup_dirs() for d in glob.glob(os.path.join(c, f"scidex-slot-{pid}-*"))] == []


@pytest.mark.parametrize("served", [True, False], ids=["served", "one-shot"])
def test_bounded_output_and_last_words(server: scidex_jail.Server, tmp_root: str, served: bool) -> None:
    """What an analysis prints reaches the caller within its budget (here
    1M: the first and last 512K, one marker line between), the report's
    streams say how much was written and dropped, and the notes carry the
    truncation and the exception that ended the analysis."""
    code = "import sys\nb = b'x' * 1048576 + b'\\n'\nfor _ in range(40):\n    sys.stdout.buffer.write(b)\nsys.stdout.flush()\nd = {}\nd['dose']\n"
    opts: Dict[str, Any] = dict(analysis_id=new_id("srvbound"), stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE, stdio_bytes="1M")
    if served:
        r = server.run([PYTHON, "-c", code], **opts)
    else:
        r = scidex_jail.run([PYTHON, "-c", code], tmp_root=tmp_root, **opts)
    assert r.status == "exit_nonzero", r.completion_notes
    assert r.report.cleanup == ("after_reply" if served else None)
    written, budget = 40 * (1 << 20 | 1), 1 << 20
    assert r.stdout is not None and budget < len(r.stdout) < budget + 256
    assert r.stdout.startswith("x" * (budget // 2) + "\n[scidex-jail: ") and r.stdout.endswith("x\n")
    streams = r.report.streams
    assert streams is not None
    assert (streams.stdout.relayed, streams.stdout.bytes, streams.stdout.delivered, streams.stdout.dropped) == (True, written, budget, written - budget)
    assert streams.stderr.tail.endswith("KeyError: 'dose'\n") and r.stderr == streams.stderr.tail
    assert "; last words: KeyError: 'dose';" in r.completion_notes
    assert f"; stdout truncated: {written - budget} of its {written} bytes dropped" in r.completion_notes


@pytest.mark.unit
def test_every_request_field_is_a_keyword() -> None:
    # The run object a served run sends: each field, as a bad_request
    # names it, maps back to the keyword of run() that gave it.
    from scidex_jail._client import JAIL_KEYWORDS, RUN_KEYWORDS
    from scidex_jail._options import Spec, keyword_of

    spec = Spec(
        binary="/bin/true", argv=("a",), analysis_id="x", profile="p", config="/c", timeout="1s", memory="1G",
        net="host", allow_tcp=(443,), root="/r", ro=("/a",), rw=("/b",), inputs=("/i",), env=(("A", "B"),),
        collect="/o", keep=True, tmp_root="/t", cgroup_parent="/g", unsafe_disable=("seccomp",),
        output_budget=(("bytes", "1G"),), other_limits=(("swap", "--swap", "0"),),
    )  # fmt: skip
    run = spec.request("/w")
    known = RUN_KEYWORDS | JAIL_KEYWORDS | {"analysis_id", "argv"}
    fields = [f"run.{k}" for k in run if k not in ("limits", "cwd")] + [f"run.limits.{k}" for k in run["limits"]]  # type: ignore[union-attr]
    assert len(fields) == 20, fields  # every field Spec sets
    for f in fields:
        assert keyword_of(f) in known | {"swap"}, (f, keyword_of(f))
    assert [keyword_of(f) for f in ("run.read_only", "run.limits.output_bytes", "run.id", "run.cwd", "stdio")] == ["ro", "output_budget", "analysis_id", None, None]
    assert run["limits"] == {"timeout": "1s", "memory": "1G", "output_bytes": "1G", "swap": "0"} and run["cwd"] == "/w"


def test_keyword_of_is_the_binarys_rows(jail_bin: str) -> None:
    # keyword_of's map is held to the rows the binary publishes: each
    # row's request field maps to its keyword.
    from scidex_jail import _limits
    from scidex_jail._options import keyword_of

    schema = _limits.schema(jail_bin)
    assert schema is not None
    for row in schema["options"]:
        if row["request_field"] and row["keyword"]:
            assert keyword_of("run." + row["request_field"]) == row["keyword"], row
    for row in schema["limits"]:
        want = "output_budget" if row["keyword"].startswith("output_") else row["keyword"]
        assert keyword_of("run." + row["request_field"]) == want, row
