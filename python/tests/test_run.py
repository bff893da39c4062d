"""scidex_jail.run/start through the real binary: results, streams, limits,
errors, concurrency. Tests taking ``jail`` run twice: through the module
functions (a ``scidex-jail run`` each) and through the session's
``scidex_jail.Server`` (conftest.py); the rest are about ``run`` alone."""

from __future__ import annotations

import concurrent.futures
import io
import os
import subprocess
from typing import Any, Dict

import pytest

import scidex_jail
from conftest import PYTHON, Jailish, leftovers, new_id, served, write


def test_ok_run_result(jail: Jailish, work: str) -> None:
    aid = new_id("ok")
    script = write(work, "ok.py", "import sys\nprint('out')\nprint('err', file=sys.stderr)\nopen('r.csv','w').write('a,b\\n1,2\\n')\n")
    r = jail.run([PYTHON, script], analysis_id=aid, ro=[script], collect=os.path.join(work, "out"),
                 stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE)  # fmt: skip
    assert (r.status, r.exit_code, r.signal) == ("ok", 0, None), r.completion_notes
    assert r.ok
    assert r.stdout == "out\n"
    # The jail's own summary line is not part of the analysis' stderr.
    assert r.stderr == "err\n"
    assert r.analysis_id == aid and r.report["id"] == aid
    assert "finished normally" in r.completion_notes
    assert r.wall_seconds > 0 and r.cpu_seconds > 0 and r.peak_memory_bytes > 0
    assert [(o.path, o.type, o.size) for o in r.outputs] == [("r.csv", "file", 8)]
    assert r.collected_to == os.path.join(work, "out")
    assert r.outputs[0].collected_path == os.path.join(work, "out", "r.csv")
    with open(r.outputs[0].collected_path, "rb") as f:
        import hashlib

        assert hashlib.sha256(f.read()).hexdigest() == r.outputs[0].sha256
    # As root, the run's own host ids, leased from the default range.
    assert 1879048192 <= r.enforced["host_uid"] <= 1879113727 and r.enforced["host_gid"] == r.enforced["host_uid"]
    assert r.enforced["identity"]["host_ids"] == "leased from 1879048192-1879113727" and r.enforced["net"] == "none"
    assert r.limits["profile"] == "default"
    assert r.started_at is not None and r.ended_at is not None and r.ended_at >= r.started_at
    assert leftovers(aid, dict(r.report)) == []


@pytest.mark.parametrize(
    "code, status, exit_code, signal",
    [
        ("raise SystemExit(3)", "exit_nonzero", 3, None),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "signaled", 137, "SIGKILL"),
    ],
)
def test_exit_and_signal(jail: Jailish, work: str, code: str, status: str, exit_code: int, signal: str) -> None:
    script = write(work, "s.py", code + "\n")
    r = jail.run([PYTHON, script], analysis_id=new_id("exit"), ro=[script])
    assert (r.status, r.exit_code, r.signal) == (status, exit_code, signal), r.completion_notes


def test_command_not_found_is_a_result(jail: Jailish) -> None:
    r = jail.run(["/nonexistent/prog"], analysis_id=new_id("enoent"), stderr=scidex_jail.DEVNULL)
    assert (r.status, r.exit_code) == ("setup_error", 127)
    assert r.report["setup_error"]["stage"] == "exec"


def test_streams_to_files_callbacks_and_objects(jail: Jailish, work: str) -> None:
    # 2 MiB of stdout into a file, stderr line by line into a callback.
    script = write(work, "s.py", (
        "import sys\n"
        "for i in range(2048):\n    sys.stdout.write('x' * 1023 + '\\n')\n"
        "for i in range(3):\n    print('line', i, file=sys.stderr, flush=True)\n"
        "sys.stderr.write('no newline')\n"
    ))  # fmt: skip
    out = os.path.join(work, "stdout.log")
    lines: list[str] = []
    r = jail.run([PYTHON, script], analysis_id=new_id("stream"), ro=[script], stdout=out, stderr=lines.append)
    assert r.status == "ok", r.completion_notes
    assert r.stdout is None and r.stderr is None
    assert os.path.getsize(out) == 2048 * 1024
    assert lines == ["line 0\n", "line 1\n", "line 2\n", "no newline"]

    buf, text = io.BytesIO(), io.StringIO()
    r = jail.run([PYTHON, "-c", "import sys; print('b'); print('t', file=sys.stderr)"],
                 analysis_id=new_id("stream"), stdout=buf, stderr=text)  # fmt: skip
    assert (buf.getvalue(), text.getvalue()) == (b"b\n", "t\n")

    with open(os.path.join(work, "fd.log"), "wb") as f:
        jail.run([PYTHON, "-c", "print('via fd')"], analysis_id=new_id("stream"), stdout=f)
    with open(os.path.join(work, "fd.log")) as f:
        assert f.read() == "via fd\n"


def test_stdin_and_env(jail: Jailish, work: str) -> None:
    r = jail.run(
        [PYTHON, "-c", "import os, sys; print(sys.stdin.read().upper(), os.environ['GREETING'], os.environ.get('HOSTNAME_LEAK'))"],
        analysis_id=new_id("stdin"), stdin=b"hello", env={"GREETING": "hi"}, stdout=scidex_jail.CAPTURE,
    )  # fmt: skip
    assert r.stdout == "HELLO hi None\n"


def test_callback_error_raised_after_the_run(jail: Jailish, work: str) -> None:
    aid = new_id("cberr")

    def boom(line: str) -> None:
        raise RuntimeError("callback bug")

    with pytest.raises(RuntimeError, match="callback bug"):
        jail.run([PYTHON, "-c", "print('a'); print('b')"], analysis_id=aid, stdout=boom)
    assert leftovers(aid, served=served(jail)) == []


@pytest.mark.parametrize(
    "kwargs, status, note",
    [
        # A script that sleeps past its 1 s budget.
        (dict(timeout=1, code="import time\nprint('started', flush=True)\ntime.sleep(120)\n"), "timeout", "timeout"),
        # A python allocation loop against a 64 MiB limit.
        (dict(memory="64M", code="a = []\nwhile True:\n    a.append(bytearray(1 << 20))\n"), "oom_killed", "64MiB limit"),
        # A fork loop against 32 PIDs: children sleep so they pile up.
        (
            dict(pids=32, code="import os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\n"),
            "pids_limit",
            "limit of 32 processes",
        ),
    ],
    ids=["timeout", "oom", "pids"],
)
def test_limits_named_in_status_and_notes(
    jail: Jailish, work: str, kwargs: Dict[str, Any], status: str, note: str
) -> None:
    kwargs = dict(kwargs)  # the parameter's dict serves both ways of running
    code = kwargs.pop("code")
    script = write(work, "limit.py", code)
    aid = new_id(status.replace("_", "-"))
    r = jail.run([PYTHON, script, aid], analysis_id=aid, ro=[script], stderr=scidex_jail.DEVNULL, **kwargs)
    assert r.status == status, r.completion_notes
    assert note in r.completion_notes, r.completion_notes
    assert leftovers(aid, dict(r.report)) == []


def test_bad_profile_raises_setup_error_with_jails_message(jail: Jailish) -> None:
    aid = new_id("badprof")
    with pytest.raises(scidex_jail.JailSetupError) as e:
        jail.run(["/bin/true"], analysis_id=aid, profile="no-such-profile")
    assert e.value.exit_code == 125
    assert "no such profile" in e.value.message and "no-such-profile" in e.value.message, e.value.message
    assert "known: default" in str(e.value)
    assert leftovers(aid) == []


def test_setup_failure_after_the_report_started_carries_its_stage(jail: Jailish) -> None:
    # The jail gets past the command line and fails creating the cgroup leaf.
    aid = new_id("badcg")
    with pytest.raises(scidex_jail.JailSetupError) as e:
        jail.run(["/bin/true"], analysis_id=aid, cgroup_parent="/nonexistent/cgroup")
    assert (e.value.stage, e.value.exit_code) == ("cgroup", 125)
    assert "/nonexistent/cgroup" in e.value.message
    assert e.value.report is not None and e.value.report["status"] == "setup_error"
    assert leftovers(aid, dict(e.value.report)) == []


def test_missing_binary_names_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # The module functions' binary= and $SCIDEX_JAIL_BIN: a Server has its
    # binary from its start (test_server.py).
    missing = "/nonexistent/dir/scidex-jail"
    with pytest.raises(scidex_jail.JailNotFoundError) as e:
        scidex_jail.run(["/bin/true"], analysis_id=new_id("nobin"), binary=missing)
    assert missing in str(e.value) and "make build" in str(e.value)
    assert isinstance(e.value, FileNotFoundError) and e.value.filename == missing
    monkeypatch.setenv("SCIDEX_JAIL_BIN", missing + "-env")
    with pytest.raises(FileNotFoundError, match="scidex-jail-env"):
        scidex_jail.run(["/bin/true"], analysis_id=new_id("nobin"))


@pytest.mark.parametrize(
    "argv, kwargs, needle",
    [
        ("python3 script.py", {}, "not one string"),
        ([], {}, "argv is empty"),
        (["/bin/true", 3], {}, "must be str"),
        (["/bin/true"], {"analysis_id": "../etc"}, "analysis_id"),
        (["/bin/true"], {"analysis_id": ""}, "analysis_id"),
        (["/bin/true"], {"timeout": -1}, "timeout"),
        (["/bin/true"], {"timeout": "soon"}, "timeout"),
        (["/bin/true"], {"memory": "lots"}, "memory"),
        (["/bin/true"], {"memory": -5}, "memory"),
        (["/bin/true"], {"cpus": float("nan")}, "cpus"),
        (["/bin/true"], {"pids": 1.5}, "pids"),
        (["/bin/true"], {"net": ""}, "net"),  # a mode's name is the binary's: test_netmodes.py
        (["/bin/true"], {"allow_tcp": (70000,)}, "allow_tcp"),
        (["/bin/true"], {"ro": "/etc"}, "sequence of paths"),
        (["/bin/true"], {"ro": ["/nonexistent/x"]}, "does not exist"),
        (["/bin/true"], {"env": {"1BAD": "x"}}, "env name"),
        (["/bin/true"], {"stdout": True}, "stdout"),
        (["/bin/true"], {"keep": "yes"}, "keep"),
        (["/bin/true"], {"profile": "--evil"}, "profile"),
    ],
)
def test_bad_arguments_raise_before_anything_starts(
    jail: Jailish, monkeypatch: pytest.MonkeyPatch, argv: object, kwargs: Dict[str, Any], needle: str
) -> None:
    def no_popen(*a: object, **k: object) -> None:
        raise AssertionError("a process was started for bad arguments")

    def no_request(*a: object, **k: object) -> None:
        raise AssertionError("a request was sent to the server for bad arguments")

    monkeypatch.setattr(subprocess, "Popen", no_popen)
    if isinstance(jail, scidex_jail.Server):
        monkeypatch.setattr(scidex_jail.Server, "submit", no_request)
    kwargs = {"analysis_id": new_id("bad"), **kwargs}
    with pytest.raises(ValueError, match=needle):
        jail.run(argv, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=needle):
        jail.start(argv, **kwargs)  # type: ignore[arg-type]


def test_twenty_runs_from_a_thread_pool(jail: Jailish, work: str) -> None:
    script = write(work, "n.py", "import sys\nopen('n.txt', 'w').write(sys.argv[1])\nprint(sys.argv[1])\n")

    def one(i: int) -> scidex_jail.Result:
        return jail.run([PYTHON, script, str(i)], analysis_id=new_id(f"pool{i}"), ro=[script],
                        stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE)  # fmt: skip

    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(one, range(20)))
    for i, r in enumerate(results):
        assert (r.status, r.stdout) == ("ok", f"{i}\n"), (i, r.completion_notes, r.stderr)
        assert [(o.path, o.size) for o in r.outputs] == [("n.txt", len(str(i)))]
        assert leftovers(r.analysis_id, dict(r.report)) == []


@pytest.mark.unit
def test_known_statuses_include_delivery_failed() -> None:
    for s in ("ok", "exit_nonzero", "signaled", "timeout", "cancelled", "setup_error",
              "oom_killed", "pids_limit", "disk_limit", "delivery_failed"):  # fmt: skip
        assert s in scidex_jail.KNOWN_STATUSES
