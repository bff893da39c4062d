"""Cancelling runs: Run.cancel(), a cancelled asyncio task, Ctrl-C. Each
must end with the jail's report saying so (where there is one to read) and
no process, cgroup leaf or run directory left. Tests taking ``jail`` run
through the module functions and through the session's Server."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import threading
from typing import Callable, Tuple

import pytest

import scidex_jail
from conftest import PYTHON, Jailish, leftovers, new_id, served, wait_for, write

# Prints a line once running, then keeps a few children busy, so there is a
# process tree to kill. Every process carries the analysis ID in argv.
LONG = (
    "import os, sys, time\n"
    "for _ in range(3):\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(120)\n"
    "        os._exit(0)\n"
    "print('started', flush=True)\n"
    "time.sleep(120)\n"
)


def _started() -> Tuple[threading.Event, Callable[[str], None]]:
    ev = threading.Event()

    def on_line(line: str) -> None:
        if line.startswith("started"):
            ev.set()

    return ev, on_line


def test_cancel_leaves_nothing(jail: Jailish, work: str) -> None:
    script = write(work, "long.py", LONG)
    aid = new_id("cancel")
    ev, on_line = _started()
    with jail.start([PYTHON, script, aid], analysis_id=aid, ro=[script], stdout=on_line) as run:
        assert run.pid is not None and run.pid > 0 and run.analysis_id == aid
        wait_for(ev.is_set, "the analysis to start")
        # The checks below can see a live run: the jail, the analysis and
        # its children, the cgroup leaf, the run directory.
        live = leftovers(aid)
        assert any(x.startswith("process") for x in live) and any(x.startswith("cgroup") for x in live), live
        assert any(x.startswith("run directory") for x in live), live
        run.cancel()
        r = run.wait()
    assert r.status == "cancelled", r.completion_notes
    assert run.poll() and run.wait() is r
    assert leftovers(aid, dict(r.report)) == []
    run.cancel()  # after the end: a no-op


def test_cancel_right_after_the_start_is_never_lost() -> None:
    # A SIGTERM in the jail's first milliseconds, before its handlers are
    # registered, would kill it with no report; cancel() holds it until the
    # jail says it is listening (--ready-fd). Every run must end cancelled,
    # with a report and nothing left. About the `run` process alone: the
    # server's twin (a cancel held until "accepted") is in test_server.py.
    for i in range(30):
        aid = new_id(f"atonce{i}")
        run = scidex_jail.start(["/bin/sleep", "60"], analysis_id=aid)
        run.cancel()
        r = run.wait()
        assert r.status == "cancelled", (i, r.status, r.completion_notes)
        assert r.report is not None and r.report.status == "cancelled", i
        assert leftovers(aid, dict(r.report)) == [], i


def test_leaving_the_block_cancels(jail: Jailish, work: str) -> None:
    script = write(work, "long.py", LONG)
    aid = new_id("ctx")
    ev, on_line = _started()
    with pytest.raises(RuntimeError, match="caller failed"):
        with jail.start([PYTHON, script, aid], analysis_id=aid, ro=[script], stdout=on_line):
            wait_for(ev.is_set, "the analysis to start")
            raise RuntimeError("caller failed")
    assert leftovers(aid, served=served(jail)) == []


def test_cancelled_asyncio_task_cancels_the_run(jail: Jailish, work: str) -> None:
    script = write(work, "long.py", LONG)
    aid = new_id("async")

    async def main() -> None:
        started = asyncio.Event()

        def on_line(line: str) -> None:
            if line.startswith("started"):
                started.set()

        task = asyncio.ensure_future(
            jail.run_async([PYTHON, script, aid], analysis_id=aid, ro=[script], stdout=on_line)
        )
        await asyncio.wait_for(started.wait(), 60)
        assert leftovers(aid) != []
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert leftovers(aid, served=served(jail)) == []


def test_run_async_result(jail: Jailish, work: str) -> None:
    aid = new_id("asyncok")

    async def main() -> scidex_jail.Result:
        return await jail.run_async(
            [PYTHON, "-c", "import sys; print(sys.stdin.read()); open('o.txt','w').write('x')"],
            analysis_id=aid, stdin="piped", stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE,
        )  # fmt: skip

    r = asyncio.run(main())
    assert (r.status, r.stdout, r.stderr) == ("ok", "piped\n", "")
    assert [o.path for o in r.outputs] == ["o.txt"]
    with pytest.raises(scidex_jail.JailSetupError, match="no such profile"):
        asyncio.run(jail.run_async(["/bin/true"], analysis_id=aid, profile="nope"))


def test_keyboard_interrupt_cancels_the_run(jail: Jailish, work: str) -> None:
    script = write(work, "long.py", LONG)
    aid = new_id("sigint")

    def on_line(line: str) -> None:
        if line.startswith("started"):
            # What Ctrl-C does to the caller; run() is waiting in the main thread.
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        jail.run([PYTHON, script, aid], analysis_id=aid, ro=[script], stdout=on_line)
    assert leftovers(aid, served=served(jail)) == []


def test_leftovers_sees_a_kept_run_directory(jail: Jailish, work: str) -> None:
    # The check the tests above rely on can fail.
    aid = new_id("kept")
    r = jail.run(["/bin/true"], analysis_id=aid, keep=True)
    try:
        assert r.report["kept"] is True
        assert leftovers(aid, dict(r.report)) == [f"run directory {r.run_dir}"]
    finally:
        shutil.rmtree(r.run_dir, ignore_errors=True)
