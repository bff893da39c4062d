"""The trusted side: commit a run's outputs to PostgreSQL.

After a run, the platform (never the analysis: it cannot reach the
database) records it::

    import psycopg
    from scidex_jail.post_process import commit_outputs

    with psycopg.connect("dbname=scidex") as conn:
        summary = commit_outputs(result, conn)   # a Result or forge.RuntimeResult

One row per run in ``scidex_jail_runs``, whatever its status (id, status,
exit code, signal, completion notes, limits, usage, the tail of stdout and
stderr with how many bytes each carried and dropped, the outputs policy,
the whole report as JSONB, started and ended) and one per committed output
file in ``scidex_jail_outputs`` (path, size, sha256, media type,
``partial``, and the bytes as ``bytea`` when the file is at most
``inline_limit`` bytes, else ``stored_at``, the URI the ``store`` hook
returned), in one transaction. The tables are created when missing, and
the columns of this version added to tables of an earlier one (the SQL is
``schema.sql`` in this package, all ``IF NOT EXISTS``).

- Every run is recorded; which of its files become output rows is the
  ``outputs`` policy: ``"ok-only"`` (the default) commits the files of a
  run whose status is ``ok`` and of no other (a timeout, a disk or output
  budget, a crash: their files are listed in the stored report only);
  ``"all-marked"`` commits what the jail hashed of every run, each row's
  ``partial`` true when the run was not ``ok`` (the file may be cut
  short); ``"none"`` records the run alone.
- Stored for good: the bytes of a file up to ``inline_limit`` (1 MiB) go
  in the database; a larger one to the ``store`` hook (see
  :func:`store_in`), and without one it is refused (:class:`CommitError`,
  nothing written): a host path is only as durable as its directory.

- Verified: every output file is read from the run's ``collect`` directory
  and its size and sha256 compared with the report's before anything is
  written; a mismatch (a file changed after the run) raises
  :class:`OutputMismatchError` and nothing is committed. Files are opened
  without following links or blocking, inside the collected directory
  only, by their exact name (``path_b64`` when the name is not UTF-8), and
  never read past the report's size: a file that grew, or a FIFO or device
  put in its place, is refused before its bytes are read. Large files are
  streamed in blocks, never held whole.
- Bounded: files the jail did not hash (their entry says why in
  ``skipped``; an ``output_limit`` run has some) are never committed: they
  stay in the report, which is stored whole.
- Idempotent: a run is keyed by (analysis id, start time); committing it
  again changes nothing and returns ``inserted=False`` (a different report,
  or another ``outputs`` policy, under the same key raises
  :class:`CommitError`).
- A run with output files must have been collected (``collect=``);
  directories and links are recorded in the report only.

Needs psycopg 3 (Debian: ``python3-psycopg``), imported when this module
is first used, not when ``scidex_jail`` is.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import importlib.resources
import json
import mimetypes
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

from ._report import Report, parse_time
from ._store import StoredFile, StoreError, StoreHook, store_in
from ._tails import Stream, pg_json, pg_text, streams_of

__all__ = [
    "OUTPUT_POLICIES", "CommitError", "CommitSummary", "OutputMismatchError", "StoredFile", "StoreError",
    "StoreHook", "commit_outputs", "media_type", "schema_sql", "store_in",
]  # fmt: skip

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

#: How much of a file is read at a time.
_BLOCK = 1 << 16
#: Files up to this size are stored in the database (bytea); larger ones by reference.
DEFAULT_INLINE_LIMIT = 1 << 20
#: Key of the advisory lock that serialises schema creation.
_SCHEMA_LOCK = 0x5C1DE7A11
#: A column schema.sql added last to each table: when one is missing, the
#: schema (creation and migration, all idempotent) is run first.
_NEWEST_COLUMNS = (("scidex_jail_runs", "stderr_dropped"), ("scidex_jail_outputs", "partial"))
#: The ``outputs`` policies; see the module documentation.
OUTPUT_POLICIES = ("ok-only", "all-marked", "none")
_MEDIA_TYPES = {
    ".ipynb": "application/x-ipynb+json",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".png": "image/png",
    ".parquet": "application/vnd.apache.parquet",
    ".md": "text/markdown",
}


class CommitError(Exception):
    """The run cannot be committed as it is; nothing was written."""


class OutputMismatchError(CommitError):
    """An output's bytes no longer match the report (size or sha256)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"output {path!r}: {message}; refusing to commit the run")
        self.path = path


@dataclass(frozen=True)
class CommitSummary:
    """What :func:`commit_outputs` did: the run's ``run_id``; ``inserted``
    False when the run was already there (nothing changed); how many output
    files were committed, stored ``inline`` and by ``reference`` (the store
    hook's URI); ``withheld``, the run's files the policy kept out of the
    outputs (they are in the stored report), ``partial`` whether the
    committed ones are marked so."""

    run_id: int
    inserted: bool
    outputs: int
    inline: int
    referenced: int
    withheld: int = 0
    partial: bool = False


@dataclass(frozen=True)
class _File:
    path: str
    exact: bytes
    size: int
    sha256: str
    media_type: str
    content: Optional[bytes]
    stored_at: Optional[str]


def schema_sql() -> str:
    """The SQL that creates the tables (``schema.sql``)."""
    return importlib.resources.files(__package__).joinpath("schema.sql").read_text(encoding="utf-8")


def media_type(path: str) -> str:
    """The media type recorded for an output, from its name."""
    ext = os.path.splitext(path)[1].lower()
    if ext in _MEDIA_TYPES:
        return _MEDIA_TYPES[ext]
    guess, _ = mimetypes.guess_type(path, strict=False)
    return guess or "application/octet-stream"


def _report_of(result: Any) -> Mapping[str, Any]:
    report = getattr(result, "report", result)
    if isinstance(report, Report):
        report = report.raw  # the JSON as the jail wrote it: what is stored and hashed
    if not isinstance(report, Mapping) or "id" not in report or "started_at" not in report:
        raise CommitError("commit_outputs needs a Result, a forge.RuntimeResult or a report dict (with id and started_at)")
    return report


def _exact_path(entry: Mapping[str, Any]) -> bytes:
    """The entry's path as the bytes the kernel knows it by: ``path`` is
    lossy for a name that is not UTF-8, ``path_b64`` is exact."""
    if entry.get("path_b64"):
        try:
            return base64.b64decode(str(entry["path_b64"]), validate=True)
        except ValueError as e:
            raise OutputMismatchError(str(entry["path"]), f"path_b64 is not base64: {e}") from e
    return str(entry["path"]).encode("utf-8", "surrogateescape")


def _open_inside(root: str, rel: str, exact: bytes, want_size: int) -> int:
    """Open root/exact for reading without following a link anywhere below
    root or blocking (a FIFO has no writer), and refuse anything but a
    regular file of the report's size: one that grew or shrank, a FIFO or a
    device is refused before a byte of it is read."""
    parts = exact.split(b"/")
    if exact.startswith(b"/") or any(p in (b"", b".", b"..") for p in parts):
        raise OutputMismatchError(rel, "not a plain relative path")
    dirfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for p in parts[:-1]:
            nxt = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dirfd)
            os.close(dirfd)
            dirfd = nxt
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dirfd)
    finally:
        os.close(dirfd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OutputMismatchError(rel, "the collected entry is not a regular file (a FIFO, device or directory put in its place?)")
    if st.st_size != want_size:
        os.close(fd)
        raise OutputMismatchError(rel, f"the collected file has {st.st_size} bytes; the report says {want_size}")
    return fd


def _read_output(root: str, entry: Mapping[str, Any], inline_limit: int) -> _File:
    rel = str(entry["path"])
    want_size = int(entry.get("size") or 0)
    want_sha = str(entry.get("sha256") or "")
    try:
        fd = _open_inside(root, rel, _exact_path(entry), want_size)
    except OSError as e:
        raise OutputMismatchError(rel, f"cannot open the collected file in {root}: {e}") from e
    h = hashlib.sha256()
    kept: Optional[bytearray] = bytearray() if want_size <= inline_limit else None
    size = 0
    with os.fdopen(fd, "rb", buffering=0) as f:
        # At most one byte past the report's size: enough to see the file
        # grew, never what it grew to.
        while size <= want_size:
            block = f.read(min(_BLOCK, want_size + 1 - size))
            if not block:
                break
            h.update(block)
            size += len(block)
            if kept is not None:
                kept += block
                if len(kept) > inline_limit:
                    kept = None
    got = h.hexdigest()
    if size != want_size or got != want_sha:
        raise OutputMismatchError(
            rel, f"the collected file has {size} bytes, sha256 {got}; the report says {want_size} bytes, sha256 {want_sha}"
        )
    content = bytes(kept) if kept is not None else None
    return _File(
        path=rel, exact=_exact_path(entry), size=size, sha256=got, media_type=media_type(rel), content=content,
        stored_at=None,
    )  # fmt: skip


def _store(root: str, f: _File, status: str, store: StoreHook) -> _File:
    """Hand a verified file too large for the database to the hook and
    record the URI it returns."""
    try:
        fd = _open_inside(root, f.path, f.exact, f.size)
    except OSError as e:
        raise OutputMismatchError(f.path, f"cannot open the collected file in {root}: {e}") from e
    with os.fdopen(fd, "rb") as fh:
        try:
            uri = store(StoredFile(f.path, f.size, f.sha256, f.media_type, status, fh))
        except Exception as e:
            raise CommitError(f"output {f.path!r}: the store hook failed: {e}; nothing was committed") from e
    if not isinstance(uri, str) or not uri:
        raise CommitError(f"output {f.path!r}: the store hook returned {uri!r}; it must return the URI it kept the file under")
    return _File(f.path, f.exact, f.size, f.sha256, f.media_type, None, uri)


def _canonical_sha256(report: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(report, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def commit_outputs(
    result: Any,
    conn: Union["psycopg.Connection[Any]", str],
    *,
    outputs: str = "ok-only",
    inline_limit: int = DEFAULT_INLINE_LIMIT,
    store: Optional[StoreHook] = None,
    collected_to: Optional[str] = None,
) -> CommitSummary:
    """Commit a run and its output files to the database, in one transaction.

    ``result`` is a :class:`scidex_jail.Result`, a
    :class:`scidex_jail.forge.RuntimeResult` or a parsed report; ``conn`` a
    psycopg 3 connection (or a conninfo string, connected and closed here).
    On an idle connection the work is committed before this returns; inside
    a transaction the caller has open, it becomes part of it (a savepoint),
    so the run can be recorded atomically with the caller's own changes, and
    is durable when the caller commits.

    Every run is recorded, whatever its status; ``outputs`` says which of
    its files are committed as outputs (``"ok-only"``, ``"all-marked"``,
    ``"none"``: see the module docs). Files up to ``inline_limit`` bytes
    are stored as ``bytea``; a larger one is handed to ``store`` (a
    callable taking a :class:`StoredFile`, returning a URI; :func:`store_in`
    is one), and refused without it. ``collected_to`` overrides the
    report's ``collected_to`` (the collected files moved). See the module
    docs for verification and idempotence.
    """
    if isinstance(inline_limit, bool) or not isinstance(inline_limit, int) or inline_limit < 0:
        raise ValueError(f"inline_limit {inline_limit!r}: give a non-negative number of bytes")
    if outputs not in OUTPUT_POLICIES:
        raise ValueError(f"outputs {outputs!r}: give one of {', '.join(OUTPUT_POLICIES)}")
    if store is not None and not callable(store):
        raise ValueError(f"store {store!r}: give a callable that keeps a StoredFile and returns its URI")
    report = _report_of(result)
    started = parse_time(report.get("started_at"))
    if started is None:
        raise CommitError(f"the report's started_at {report.get('started_at')!r} is not a time")
    wall = float(report.get("wall_seconds") or 0.0)
    status = str(report.get("status", ""))
    committing = outputs == "all-marked" or (outputs == "ok-only" and status == "ok")
    root = collected_to or report.get("collected_to") or None
    listed = [e for e in report.get("outputs") or () if e.get("type") == "file"]
    # A file the jail did not hash (skipped says why) was not collected
    # either: it is in the stored report only.
    entries = [e for e in listed if e.get("sha256")] if committing else []
    if entries and not root:
        raise CommitError(
            f"run {report['id']!r} has {len(entries)} output file(s) but did not collect them: "
            "run it with collect=DIR so their bytes can be verified and stored"
        )
    big = [e for e in entries if int(e.get("size") or 0) > inline_limit]
    if big and store is None:
        raise CommitError(
            f"run {report['id']!r}: output {big[0]['path']!r} has {big[0].get('size')} bytes, over inline_limit "
            f"{inline_limit}, and no store hook was given to keep it: pass store= (a callable that keeps the file "
            "and returns its URI, e.g. post_process.store_in(DIR)), a larger inline_limit, or outputs=\"none\""
        )
    # Every file is read and verified before anything is stored or written.
    files = [_read_output(str(root), e, inline_limit) for e in entries]
    if store is not None:
        files = [f if f.content is not None else _store(str(root), f, status, store) for f in files]
    streams = streams_of(result, report)

    import psycopg
    from psycopg.types.json import Jsonb

    args = (report, started, wall, root, files, streams, outputs, len(listed) - len(files), Jsonb)
    if isinstance(conn, str):
        with psycopg.connect(conn) as own:
            return _write(own, *args)
    return _write(conn, *args)


def _write(
    conn: "psycopg.Connection[Any]",
    report: Mapping[str, Any],
    started: datetime.datetime,
    wall: float,
    root: Optional[str],
    files: List[_File],
    streams: Dict[str, Stream],
    policy: str,
    withheld: int,
    Jsonb: Any,
) -> CommitSummary:
    enforced = report.get("enforced") or {}
    usage = (enforced.get("cgroup") or {}).get("usage") or {}
    limits = report.get("limits") or {}
    digest = _canonical_sha256(report)
    cpu = float(report.get("cpu_user_seconds") or 0.0) + float(report.get("cpu_system_seconds") or 0.0)
    peak = int(usage.get("peak_memory_bytes") or report.get("peak_rss_bytes") or 0)
    inline = sum(1 for f in files if f.content is not None)
    status = str(report.get("status", ""))
    partial = status != "ok"
    out, err = streams["stdout"], streams["stderr"]

    def summary(run_id: int, inserted: bool) -> CommitSummary:
        return CommitSummary(run_id, inserted, len(files), inline, len(files) - inline, withheld, partial and bool(files))

    with conn.transaction():
        _ensure_schema(conn)
        row: Optional[Tuple[Any, ...]] = conn.execute(
            """
            INSERT INTO scidex_jail_runs (analysis_id, started_at, ended_at, status, exit_code, signal,
                completion_notes, profile, limits, usage, wall_seconds, cpu_seconds, peak_memory_bytes,
                collected_to, report, report_sha256, outputs_policy, stdout_tail, stderr_tail,
                stdout_bytes, stderr_bytes, stdout_dropped, stderr_dropped)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
            ON CONFLICT (analysis_id, started_at) DO NOTHING
            RETURNING run_id
            """,
            (
                str(report["id"]), started, started + datetime.timedelta(seconds=wall),
                status, int(report.get("exit_code", -1)), report.get("signal") or None,
                pg_text(str(report.get("completion_notes", ""))), str(limits.get("profile", "")), Jsonb(limits),
                Jsonb(usage), wall, cpu, peak, root, Jsonb(pg_json(report)), digest, policy,
                out.tail, err.tail, out.size, err.size, out.dropped, err.dropped,
            ),  # fmt: skip
        ).fetchone()
        if row is None:
            existing = conn.execute(
                "SELECT run_id, report_sha256, outputs_policy FROM scidex_jail_runs"
                " WHERE analysis_id = %s AND started_at = %s",
                (str(report["id"]), started),
            ).fetchone()
            assert existing is not None, "ON CONFLICT without a conflicting row"
            if existing[1] != digest:
                raise CommitError(
                    f"run {report['id']!r} started {report['started_at']} is already committed with a different "
                    "report; refusing to change it"
                )
            if existing[2] is not None and existing[2] != policy:
                raise CommitError(
                    f"run {report['id']!r} started {report['started_at']} is already committed with "
                    f"outputs={existing[2]!r}; refusing to commit it again with outputs={policy!r}"
                )
            return summary(int(existing[0]), False)
        run_id = int(row[0])
        if files:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO scidex_jail_outputs (run_id, path, size, sha256, media_type, content, stored_at, partial)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    [(run_id, f.path, f.size, f.sha256, f.media_type, f.content, f.stored_at, partial) for f in files],
                )
    return summary(run_id, True)


def _ensure_schema(conn: "psycopg.Connection[Any]") -> None:
    """Create the tables, or add this version's columns to an earlier
    version's, when a table or a column is missing."""
    found = conn.execute(
        "SELECT count(*) FROM pg_attribute WHERE NOT attisdropped AND ("
        + " OR ".join("(attrelid = to_regclass(%s) AND attname = %s)" for _ in _NEWEST_COLUMNS)
        + ")",
        [x for pair in _NEWEST_COLUMNS for x in pair],
    ).fetchone()
    if found is None or found[0] != len(_NEWEST_COLUMNS):
        # Two first commits at once must not race on CREATE TABLE or ALTER.
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        conn.execute(schema_sql())
