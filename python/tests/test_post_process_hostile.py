"""What an analysis leaves is hostile input to the trusted side too:
commit_outputs never reads more than the report says a file holds, refuses
a FIFO, a device or a grown file put in a collected file's place (writing
nothing), commits names that are not UTF-8 exactly, and refuses a run over
its output budget as a run without outputs unless asked. Run.cancel() ends a run at once while the
jail hashes a huge file."""

from __future__ import annotations

import os
import stat
import threading
import time
from typing import Any, Callable

import pytest

import scidex_jail
from conftest import PYTHON, Postgres, leftovers, new_id, wait_for
from scidex_jail.post_process import OutputMismatchError, commit_outputs


def _collected(work: str, script: str, tag: str) -> scidex_jail.Result:
    return scidex_jail.run([PYTHON, "-c", script], analysis_id=new_id(tag), collect=os.path.join(work, tag))


def _nothing_written(conn: Any) -> None:
    assert conn.execute("SELECT to_regclass('scidex_jail_runs')").fetchone() == (None,)


@pytest.mark.parametrize(
    "swap",
    [
        pytest.param(lambda p: os.mkfifo(p), id="fifo"),
        pytest.param(lambda p: os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 5)), id="device /dev/zero"),
        pytest.param(lambda p: open(p, "wb").write(b"x" * 100 + b"y" * (1 << 20)), id="grown file"),
        pytest.param(lambda p: os.symlink("/dev/zero", p), id="link to /dev/zero"),
    ],
)
def test_swapped_collected_file_is_refused(work: str, postgres: Postgres, db: Callable[[], Any], swap: Any) -> None:
    r = _collected(work, "open('data.bin', 'wb').write(b'x' * 100)", "swap")
    assert r.status == "ok", r.completion_notes
    path = os.path.join(work, "swap", "data.bin")
    os.remove(path)
    swap(path)
    conn = db()
    started = time.monotonic()
    with pytest.raises(OutputMismatchError, match="data.bin"):
        commit_outputs(r, conn)
    # Refused on the open fd's type and size, without reading it (a FIFO
    # with no writer would block, /dev/zero never end).
    assert time.monotonic() - started < 5
    _nothing_written(conn)


def test_name_not_utf8_committed_exactly(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    r = _collected(work, "import os\nos.mkdir(b'd\\xff')\nopen(b'd\\xff/in', 'w').write('in')", "names")
    assert r.status == "ok", r.completion_notes
    summary = commit_outputs(r, db())
    assert summary.outputs == 1 and summary.inline == 1


def test_output_limit_recorded_without_outputs_unless_asked(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    r = _collected(work, "open('big.bin', 'wb').truncate(1 << 40)\nopen('a.txt', 'w').write('a')", "over")
    assert r.status == "output_limit" and r.exit_code == 123, r.completion_notes
    assert "big.bin" in r.completion_notes
    big = next(o for o in r.outputs if o.path == "big.bin")
    assert big.size == 1 << 40 and big.sha256 is None and big.collected_path is None and "one file" in (big.skipped or "")
    conn = db()
    summary = commit_outputs(r, conn)
    assert (summary.outputs, summary.withheld) == (0, 2)
    assert conn.execute("SELECT status FROM scidex_jail_runs").fetchall() == [("output_limit",)]
    assert conn.execute("SELECT count(*) FROM scidex_jail_outputs").fetchone() == (0,)
    conn.commit()
    other = db()  # the run deleted, to commit it again with the other policy
    other.execute("DELETE FROM scidex_jail_runs")
    other.commit()
    summary = commit_outputs(r, conn, outputs="all-marked")
    # big.bin was not hashed or collected: it is in the stored report only.
    assert (summary.outputs, summary.inline, summary.partial) == (1, 1, True)
    rows = conn.execute("SELECT path, partial FROM scidex_jail_outputs").fetchall()
    assert rows == [("a.txt", True)]


def _wait_read(pid: int, n: int) -> None:
    """Wait until process pid has read n bytes (rchar)."""

    def read() -> bool:
        with open(f"/proc/{pid}/io") as f:
            return any(int(line.split()[1]) >= n for line in f if line.startswith("rchar:"))

    wait_for(read, f"the jail to read {n} bytes")


def test_cancel_while_the_jail_hashes(work: str) -> None:
    aid = new_id("hashcancel")
    ready = threading.Event()
    script = "open('big.bin', 'wb').truncate(1 << 40)\nprint('ready', flush=True)"
    with scidex_jail.start(
        [PYTHON, "-c", script], analysis_id=aid, stdout=lambda line: ready.set(),
        output_budget={"bytes": "none", "file_bytes": "none"},
    ) as run:  # fmt: skip
        assert ready.wait(30), "the analysis did not start"
        _wait_read(run.pid, 64 << 20)  # the analysis has exited: the jail is hashing 1 TiB
        run.cancel()
        r = run.wait(timeout=10)
    assert r.status == "cancelled" and "after the analysis ended" in r.completion_notes, r.completion_notes
    assert leftovers(aid, dict(r.report)) == []


def test_output_budget_argument() -> None:
    from scidex_jail._options import build_spec

    spec = build_spec([PYTHON], analysis_id="x", output_budget={"entries": 500, "bytes": "1G", "file_bytes": "none", "time": 90})
    cmd = spec.command("/r.json")
    for flag in ("--output-entries=500", "--output-bytes=1G", "--output-file-bytes=none", "--output-time=90s"):
        assert flag in cmd, cmd
    for bad, match in (({"entries": 0}, "0 is refused"), ({"bytes": "0"}, "0 is refused"), ({"disk": 1}, "the budgets are")):
        with pytest.raises(ValueError, match=match):
            build_spec([PYTHON], analysis_id="x", output_budget=bad)
