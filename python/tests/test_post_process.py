"""post_process.commit_outputs against a real PostgreSQL 15, with outputs
from real runs; the analysis itself tries to reach the same server and
cannot."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
from typing import Any, Callable

import pytest

import scidex_jail
from conftest import PYTHON, REPO, Postgres, leftovers, new_id, wait_for, write
from scidex_jail import forge
from scidex_jail.post_process import CommitError, OutputMismatchError, commit_outputs, schema_sql, store_in

# An analysis that writes a CSV and a PNG (stdlib only: zlib + struct), and
# tries the database every way it could: TCP, each unix socket, psycopg.
ANALYSIS = r'''
import json, socket, struct, sys, zlib

def png(w, h):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"".join(bytes((x * 255 // w, y * 255 // h, 128)) for x in range(w)) for y in range(h))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")

with open("results.csv", "w") as f:
    f.write("dose,response\n" + "".join(f"{d},{d * 0.5:.2f}\n" for d in range(100)))
with open("plot.png", "wb") as f:
    f.write(png(64, 48))

mode, port, sockets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
tries = {}
def attempt(name, fn):
    try:
        fn()
        result = "connected"
    except OSError as e:
        result = f"{type(e).__name__} errno {e.errno}"
    except Exception as e:
        result = f"{type(e).__name__}: {e}"
    tries.setdefault(name, set()).add(result)
def unix(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(path)
    s.close()
def pg(conninfo):
    import psycopg
    psycopg.connect(conninfo).close()
def one_round():
    attempt("tcp", lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close())
    attempt("psycopg tcp", lambda: pg(f"host=127.0.0.1 port={port} user=postgres dbname=postgres connect_timeout=5"))
    for path in sockets:
        attempt(path, lambda: unix(path))
        attempt("psycopg " + path, lambda: pg(f"host={path.rsplit('/', 1)[0]} port={port} user=postgres dbname=postgres connect_timeout=5"))
one_round()
rounds = 1
if mode == "loop":
    # Keep trying until the test says the trusted side has committed (a
    # line on stdin), then once more: the attempts bracket the commit, one
    # round before it began, one after it ended, and any number during.
    import select
    print("started", flush=True)
    while True:
        done = select.select([sys.stdin], [], [], 0.02)[0]
        one_round()
        rounds += 1
        if done:
            break
print(json.dumps({"rounds": rounds, "tries": {k: sorted(v) for k, v in tries.items()}}))
'''


def _run_analysis(work: str, postgres: Postgres) -> scidex_jail.Result:
    script = write(work, "analysis.py", ANALYSIS)
    aid = new_id("pg")
    r = scidex_jail.run(
        [PYTHON, script, "once", str(postgres.port), *postgres.sockets],
        analysis_id=aid, ro=[script], collect=os.path.join(work, "outputs"),
        stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE,
    )  # fmt: skip
    assert r.status == "ok", (r.completion_notes, r.stderr)
    return r


def _count(conn: Any, table: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0])


def _assert_db_unreachable(postgres: Postgres, out: str) -> int:
    """Every attempt of the analysis failed, the right way; returns its rounds."""
    got = json.loads(out)
    tries = got["tries"]
    assert set(tries) == {"tcp", "psycopg tcp", *postgres.sockets, *("psycopg " + s for s in postgres.sockets)}
    assert tries["tcp"] == ["OSError errno 97"], tries  # EAFNOSUPPORT: seccomp refuses inet sockets
    for s in postgres.sockets:
        assert tries[s] == ["FileNotFoundError errno 2"], tries  # the socket directories are not there
    for k in ("psycopg tcp", *("psycopg " + s for s in postgres.sockets)):
        assert len(tries[k]) == 1 and tries[k][0].startswith("OperationalError"), tries
    return int(got["rounds"])


def test_outputs_reach_the_database_and_the_analysis_never_does(
    work: str, postgres: Postgres, db: Callable[[], Any]
) -> None:
    conn = db()  # the trusted side is connected all along
    conn.execute("SELECT 1")
    conn.rollback()  # idle again: commit_outputs then commits on its own
    r = _run_analysis(work, postgres)
    assert _assert_db_unreachable(postgres, r.stdout or "") == 1

    # A second analysis keeps trying while the trusted side commits the first.
    started = threading.Event()
    prober_out: list[str] = []

    def on_line(line: str) -> None:
        if line == "started\n":
            started.set()
        else:
            prober_out.append(line)

    rfd, wfd = os.pipe()
    prober = scidex_jail.start(
        [PYTHON, os.path.join(work, "analysis.py"), "loop", str(postgres.port), *postgres.sockets],
        analysis_id=new_id("prober"), ro=[os.path.join(work, "analysis.py")], stdin=rfd, stdout=on_line,
    )  # fmt: skip
    os.close(rfd)
    with prober:
        wait_for(started.is_set, "the probing analysis to start")
        summary = commit_outputs(r, conn)
        # Outside, at the same moment: the same server answers on TCP and on both sockets.
        socket.create_connection(("127.0.0.1", postgres.port), timeout=5).close()
        for s in postgres.sockets:
            u = socket.socket(socket.AF_UNIX)
            u.connect(s)
            u.close()
        os.write(wfd, b"committed\n")
        os.close(wfd)
        pr = prober.wait()
    assert pr.status == "ok", pr.completion_notes
    assert _assert_db_unreachable(postgres, "".join(prober_out)) >= 2

    assert (summary.inserted, summary.outputs, summary.inline, summary.referenced) == (True, 2, 2, 0)

    conn = db()  # what is there is committed: a new session sees it
    run = conn.execute(
        "SELECT analysis_id, status, exit_code, completion_notes, limits->>'profile', report->>'id', "
        "wall_seconds, peak_memory_bytes, ended_at > started_at FROM scidex_jail_runs WHERE run_id = %s",
        (summary.run_id,),
    ).fetchone()
    assert run == (r.analysis_id, "ok", 0, r.completion_notes, "default", r.analysis_id,
                   r.wall_seconds, r.peak_memory_bytes, True)  # fmt: skip
    rows = conn.execute(
        "SELECT path, size, sha256, media_type, content, stored_at FROM scidex_jail_outputs WHERE run_id = %s ORDER BY path",
        (summary.run_id,),
    ).fetchall()
    assert [(p, m) for p, _, _, m, _, _ in rows] == [("plot.png", "image/png"), ("results.csv", "text/csv")]
    for path, size, sha, _, content, stored_at in rows:
        with open(os.path.join(work, "outputs", path), "rb") as f:
            data = f.read()
        assert bytes(content) == data and size == len(data) and stored_at is None
        assert sha == hashlib.sha256(data).hexdigest() == next(o.sha256 for o in r.outputs if o.path == path)
    assert bytes(rows[0][4]).startswith(b"\x89PNG\r\n\x1a\n")
    assert leftovers(r.analysis_id, dict(r.report)) == []


def test_second_commit_changes_nothing(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    r = _run_analysis(work, postgres)
    conn = db()
    first = commit_outputs(r, conn)
    before = conn.execute("SELECT run_id, committed_at, report FROM scidex_jail_runs").fetchall()
    second = commit_outputs(r, conn)
    # Also through a conninfo string and from a fresh connection.
    third = commit_outputs(r, postgres.conninfo(conn.info.dbname))
    assert first.inserted and not second.inserted and not third.inserted
    assert first.run_id == second.run_id == third.run_id
    assert conn.execute("SELECT run_id, committed_at, report FROM scidex_jail_runs").fetchall() == before
    assert (_count(conn, "scidex_jail_runs"), _count(conn, "scidex_jail_outputs")) == (1, 2)


def test_tampered_output_is_refused(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    r = _run_analysis(work, postgres)
    with open(os.path.join(work, "outputs", "results.csv"), "r+b") as f:
        f.seek(20)
        f.write(b"9")  # same size, different bytes
    conn = db()
    with pytest.raises(OutputMismatchError, match="results.csv.*sha256") as e:
        commit_outputs(r, conn)
    assert e.value.path == "results.csv"
    # Nothing was written, not even the tables.
    assert conn.execute("SELECT to_regclass('scidex_jail_runs')").fetchone() == (None,)
    # A file swapped for a link is refused too.
    os.remove(os.path.join(work, "outputs", "results.csv"))
    os.symlink("/etc/passwd", os.path.join(work, "outputs", "results.csv"))
    with pytest.raises(OutputMismatchError, match="cannot open"):
        commit_outputs(r, conn)


def test_large_outputs_stored_by_the_hook_and_limits_recorded(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    conn = db()
    conn.execute(schema_sql())  # tables already there: commit_outputs must cope
    conn.commit()
    rr = forge.run_python_script(
        source="open('big.bin', 'wb').write(bytes(range(256)) * 64)\nopen('small.txt', 'w').write('s')\n"
        "import time\ntime.sleep(60)\n",
        analysis_id=new_id("big"), timeout=1, collect=os.path.join(work, "big"),
    )  # fmt: skip
    assert rr.status == "timeout"
    with pytest.raises(CommitError, match="big.bin.*16384 bytes, over inline_limit 1024.*store="):
        commit_outputs(rr, conn, inline_limit=1024, outputs="all-marked")
    summary = commit_outputs(rr, conn, inline_limit=1024, outputs="all-marked", store=store_in(os.path.join(work, "store")))
    assert (summary.inline, summary.referenced, summary.partial) == (1, 1, True)
    rows = dict(
        (p, (c, s))
        for p, c, s in conn.execute("SELECT path, content, stored_at FROM scidex_jail_outputs").fetchall()
    )
    sha = hashlib.sha256(bytes(range(256)) * 64).hexdigest()
    assert rows["big.bin"] == (None, f"file://{work}/store/{sha[:2]}/{sha}")
    assert bytes(rows["small.txt"][0]) == b"s" and rows["small.txt"][1] is None
    status, notes, timeout = conn.execute(
        "SELECT status, completion_notes, (limits->>'timeout_seconds')::float FROM scidex_jail_runs"
    ).fetchone()
    assert (status, timeout) == ("timeout", 1.0) and "timeout" in notes


def test_uncollected_outputs_are_refused(postgres: Postgres, db: Callable[[], Any]) -> None:
    r = scidex_jail.run([PYTHON, "-c", "open('x', 'w').write('x')"], analysis_id=new_id("nocollect"))
    with pytest.raises(CommitError, match="did not collect"):
        commit_outputs(r, db())
    with pytest.raises(ValueError, match="inline_limit"):
        commit_outputs(r, db(), inline_limit=-1)


def test_commit_joins_an_open_transaction(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    r = _run_analysis(work, postgres)
    conn = db()
    conn.execute("SELECT 1")  # the caller's transaction is open
    commit_outputs(r, conn)
    conn.rollback()  # ... and rolled back: the run goes with it
    other = db()
    assert other.execute("SELECT to_regclass('scidex_jail_runs')").fetchone() == (None,)
    with conn.transaction():
        commit_outputs(r, conn)
    assert _count(other, "scidex_jail_runs") == 1


def test_readme_example(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    """The Python manual's example (python/README.md, "Run an analysis and
    commit its outputs") runs as printed, with its paths and database
    swapped for this test's."""
    with open(os.path.join(REPO, "python", "README.md"), encoding="utf-8") as f:
        readme = f.read()
    section = readme[readme.index("## Run an analysis and commit its outputs"):]
    code = section[section.index("```python\n") + len("```python\n"):]
    code = code[: code.index("```")]
    assert len(code.strip().splitlines()) <= 12, code
    script = write(work, "analysis.py", "open('result.txt', 'w').write('42')\n")
    conn = db()
    aid = new_id("readme")
    code = (
        code.replace('"/srv/analyses/a42/analysis.py"', repr(script))
        .replace('"/srv/outputs/a42"', repr(os.path.join(work, "outputs")))
        .replace('"a42"', repr(aid))
        .replace('"dbname=scidex"', repr(postgres.conninfo(conn.info.dbname)))
    )
    assert "/srv/" not in code and "dbname=scidex" not in code, code
    printed: list[str] = []
    exec(compile(code, "python/README.md", "exec"), {"print": lambda *a: printed.append(" ".join(map(str, a)))})
    assert printed[0].startswith("ok The analysis finished normally"), printed
    assert printed[1].endswith(": 1 output file(s) committed"), printed
    row = conn.execute("SELECT path, content FROM scidex_jail_outputs").fetchone()
    assert (row[0], bytes(row[1])) == ("result.txt", b"42")
