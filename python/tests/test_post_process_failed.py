"""Every run in the database (issue 33, item 6): commit_outputs records a
run whatever its status, with its notes and the tails of its output; the
``outputs`` policy decides which of a failed run's files become outputs
(never a partial file unmarked); a file too large for the database goes to
the platform's store hook or is refused; a database of the schema before
issue 33 is migrated in place."""

from __future__ import annotations

import hashlib
import os
from typing import Any, Callable, Dict, Tuple

import pytest

import scidex_jail
from conftest import PYTHON, REPO, Postgres, new_id
from scidex_jail import forge
from scidex_jail.post_process import CommitError, commit_outputs, schema_sql, store_in

# Each writes a small finished file first, then fails its own way, leaving
# a file cut short (disk), too large to hash (output) or half written
# (timeout).
FAILURES: Dict[str, Tuple[str, Dict[str, Any]]] = {
    "output_limit": (
        "open('partial.csv', 'w').write('a,b\\n1,2\\n')\nopen('big.bin', 'wb').truncate(1 << 40)\n",
        {},
    ),
    "disk_limit": (
        "open('partial.csv', 'w').write('a,b\\n1,2\\n')\n"
        "with open('big.bin', 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))\n",
        {"disk": "16M"},
    ),
    "timeout": (
        "import sys, time\nopen('partial.csv', 'w').write('a,b\\n1,2\\n')\nf = open('big.bin', 'wb')\n"
        "f.write(b'y' * 3000)\nf.flush()\nprint('waiting', file=sys.stderr, flush=True)\ntime.sleep(60)\n",
        {"timeout": 1},
    ),
}


def _fail(work: str, kind: str) -> forge.RuntimeResult:
    source, limits = FAILURES[kind]
    rr = forge.run_python_script(source=source, analysis_id=new_id(kind), collect=os.path.join(work, kind), **limits)
    assert rr.status == kind, rr.completion_notes
    return rr


def _run_row(conn: Any, run_id: int) -> Dict[str, Any]:
    cur = conn.execute("SELECT * FROM scidex_jail_runs WHERE run_id = %s", (run_id,))
    names = [d.name for d in cur.description]
    row = cur.fetchone()
    assert row is not None
    return dict(zip(names, row))


@pytest.mark.parametrize("kind", sorted(FAILURES))
def test_failed_run_recorded_without_its_files(work: str, postgres: Postgres, db: Callable[[], Any], kind: str) -> None:
    rr = _fail(work, kind)
    conn = db()
    summary = commit_outputs(rr, conn)  # the default: ok-only
    assert (summary.inserted, summary.outputs, summary.withheld) == (True, 0, 2), summary
    row = _run_row(conn, summary.run_id)
    assert (row["status"], row["completion_notes"], row["outputs_policy"]) == (kind, rr.completion_notes, "ok-only")
    assert row["stderr_tail"] == rr.stderr_tail and row["stderr_bytes"] == rr.stderr_bytes
    assert (row["stdout_tail"], row["stdout_bytes"], row["stdout_dropped"]) == ("", 0, 0)
    # No file of a failed run is an output; the report, stored whole,
    # still lists them.
    assert conn.execute("SELECT count(*) FROM scidex_jail_outputs").fetchone() == (0,)
    assert sorted(o["path"] for o in row["report"]["outputs"]) == ["big.bin", "partial.csv"]
    # Idempotent; another policy for the same run is refused.
    assert commit_outputs(rr, conn).inserted is False
    with pytest.raises(CommitError, match="outputs='ok-only'.*outputs='none'"):
        commit_outputs(rr, conn, outputs="none")


def test_all_marked_commits_a_failed_run_marked_partial(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    rr = _fail(work, "disk_limit")
    big = rr.output("big.bin")
    assert big is not None and big.sha256 is not None and big.size > 1 << 20
    conn = db()
    # The 16 MiB file cut short by the disk budget is over the inline
    # limit: refused without a store hook, nothing written.
    with pytest.raises(CommitError, match="big.bin.*no store hook.*store_in"):
        commit_outputs(rr, conn, outputs="all-marked")
    assert conn.execute("SELECT to_regclass('scidex_jail_runs')").fetchone() == (None,)
    store = os.path.join(work, "store")
    summary = commit_outputs(rr, conn, outputs="all-marked", store=store_in(store))
    assert (summary.outputs, summary.inline, summary.referenced, summary.partial) == (2, 1, 1, True)
    rows = {p: (c, s, partial) for p, c, s, partial in conn.execute(
        "SELECT path, content, stored_at, partial FROM scidex_jail_outputs").fetchall()}  # fmt: skip
    assert bytes(rows["partial.csv"][0]) == b"a,b\n1,2\n" and rows["partial.csv"][1:] == (None, True)
    # The large file was copied into the store by its sha256: the collect
    # directory can go.
    uri = rows["big.bin"][1]
    assert rows["big.bin"][0] is None and uri == f"file://{store}/{big.sha256[:2]}/{big.sha256}"
    with open(uri[len("file://"):], "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == big.sha256
    assert rows["big.bin"][2] is True


def test_output_limit_all_marked_and_none(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    rr = _fail(work, "output_limit")
    conn = db()
    summary = commit_outputs(rr, conn, outputs="all-marked")
    # big.bin was over the budget, never hashed: only in the stored report.
    assert (summary.outputs, summary.withheld, summary.partial) == (1, 1, True)
    assert conn.execute("SELECT path, partial FROM scidex_jail_outputs").fetchall() == [("partial.csv", True)]
    ok = scidex_jail.run([PYTHON, "-c", "open('r.txt', 'w').write('r')"], analysis_id=new_id("none"),
                         collect=os.path.join(work, "none"))  # fmt: skip
    summary = commit_outputs(ok, conn, outputs="none")
    assert (summary.outputs, summary.withheld) == (0, 1)
    assert _run_row(conn, summary.run_id)["outputs_policy"] == "none"
    with pytest.raises(ValueError, match="outputs 'partial'.*ok-only, all-marked, none"):
        commit_outputs(ok, conn, outputs="partial")


LAST_WORDS = {
    "SyntaxError": ("print('unclosed)\n", "SyntaxError: unterminated string literal"),
    "KeyError": ("row = {'dose': 1}\ndel row['dose']\nrow['dose']\n", "KeyError: 'dose'"),
    "PermissionError": ("open('/etc/shadow').read()\n", "PermissionError: [Errno 13] Permission denied: '/etc/shadow'"),
}


@pytest.mark.parametrize("kind", sorted(LAST_WORDS))
def test_why_a_run_failed_is_in_its_row(postgres: Postgres, db: Callable[[], Any], kind: str) -> None:
    source, words = LAST_WORDS[kind]
    rr = forge.run_python_script(source=source, analysis_id=new_id(kind.lower()))
    assert rr.status == "exit_nonzero", rr.completion_notes
    conn = db()
    row = _run_row(conn, commit_outputs(rr, conn).run_id)
    assert row["stderr_tail"].rstrip().splitlines()[-1].startswith(words), row["stderr_tail"]
    assert row["completion_notes"] == rr.completion_notes
    # The jail's last words (issue 33, item 2): the notes name the exception.
    assert "streams" in rr.report.raw
    assert words.split(" (")[0] in row["completion_notes"], row["completion_notes"]


def test_tails_from_the_report_and_nul(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    """The report's streams (the jail saw every byte) win over forge's
    capture; a NUL the analysis printed (PostgreSQL's text and jsonb hold
    none) becomes U+FFFD, and the run is committed."""
    r = scidex_jail.run([PYTHON, "-c", "import sys; sys.stderr.write('a\\0b')"], analysis_id=new_id("nul"),
                        stderr=scidex_jail.CAPTURE)  # fmt: skip
    conn = db()
    # A Result that captured its stderr: the tail from the report's streams
    # (a jail that writes them), else from the captured text.
    row = _run_row(conn, commit_outputs(r, conn).run_id)
    stdout_tail = ""  # stdout went to the caller's, through the jail's relay
    assert (row["stderr_tail"], row["stderr_bytes"], row["stdout_tail"]) == ("a\ufffdb", 3, stdout_tail)
    report = {**r.report.raw, "id": new_id("nul-report")}
    report["streams"] = {
        "stdout": {"relayed": True, "bytes": 10 << 20, "delivered": 1 << 20, "dropped": 9 << 20, "tail": "end\n"},
        "stderr": {"relayed": True, "bytes": 3, "delivered": 3, "dropped": 0, "tail": "a\x00b"},
    }
    row = _run_row(conn, commit_outputs(report, conn).run_id)
    assert (row["stdout_tail"], row["stdout_bytes"], row["stdout_dropped"]) == ("end\n", 10 << 20, 9 << 20)
    assert (row["stderr_tail"], row["stderr_bytes"], row["stderr_dropped"]) == ("a\ufffdb", 3, 0)
    assert row["report"]["streams"]["stderr"]["tail"] == "a\ufffdb"


def _columns(conn: Any) -> list[tuple[str, str, str, bool]]:
    return sorted(conn.execute(
        "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a"
        " JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname IN ('scidex_jail_runs', 'scidex_jail_outputs')"
        " AND a.attnum > 0 AND NOT a.attisdropped"
    ).fetchall())  # fmt: skip


def test_schema_before_33_is_migrated(work: str, postgres: Postgres, db: Callable[[], Any]) -> None:
    conn = db()
    with open(os.path.join(REPO, "python", "tests", "sql", "schema_before_33.sql"), encoding="utf-8") as f:
        conn.execute(f.read())
    # A timed-out run committed by that version, its file unmarked.
    old = conn.execute(
        "INSERT INTO scidex_jail_runs (analysis_id, started_at, ended_at, status, exit_code, completion_notes, profile,"
        " limits, usage, wall_seconds, cpu_seconds, peak_memory_bytes, report, report_sha256) VALUES"
        " ('old', now(), now(), 'timeout', 137, 'timed out', 'default', '{}', '{}', 1, 1, 1, '{}', 'x') RETURNING run_id"
    ).fetchone()[0]  # fmt: skip
    conn.execute("INSERT INTO scidex_jail_outputs VALUES (%s, 'half.csv', 1, 'x', 'text/csv', NULL, '/srv/out/half.csv')", (old,))
    conn.commit()
    r = scidex_jail.run([PYTHON, "-c", "open('r.txt', 'w').write('r')"], analysis_id=new_id("migrate"),
                        collect=os.path.join(work, "out"))  # fmt: skip
    summary = commit_outputs(r, conn)
    assert (summary.inserted, summary.outputs) == (True, 1)
    assert conn.execute("SELECT path, partial FROM scidex_jail_outputs ORDER BY path").fetchall() == [
        ("half.csv", True), ("r.txt", False)]  # fmt: skip
    assert _run_row(conn, old)["outputs_policy"] is None
    # The migrated tables are the fresh ones, and the schema runs again as a no-op.
    import psycopg

    name = conn.info.dbname + "_fresh"
    with psycopg.connect(postgres.conninfo(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(postgres.conninfo(name)) as other:
            other.execute(schema_sql())
            other.commit()
            assert _columns(other) == _columns(conn)
        conn.execute(schema_sql())
        conn.commit()
        assert _columns(conn) == _columns(db())
    finally:
        with psycopg.connect(postgres.conninfo(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name}")
