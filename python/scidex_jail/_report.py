"""The jail's JSON report, typed: :class:`Report` and its parts.

The report is the jail's interface; its JSON Schema ships in this package
(:func:`scidex_jail.schema_text`) and :func:`scidex_jail.validate_report`
checks a report against it.

Every field the schema names is typed here (a test holds the classes to
the schema both ways, tests/test_report_types.py). Parsing is lenient where
a report can grow: fields this version does not know (a newer binary's)
stay in :attr:`Report.raw` (and in each part's ``raw``), and a field a
report lacks (an older binary's) gets its zero value. Validation is strict:
the schema refuses a field it does not name, so validate a report against
the schema of the binary that wrote it (``scidex-jail schema``) or a later
one of the same version. Compatibility rule (the schema's own): new
optional fields may appear within a version; removing, renaming or changing
the meaning of a field, or adding a status, makes a new version, whose
``schema`` value differs from :data:`REPORT_SCHEMA`.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

from ._egress import Egress
from ._enforced import CgroupUsage, Enforced
from ._errors import JailError
from ._fields import COMPUTED, GATHERS, ROWS, _float, _int, _is_obj, _made, _obj, _opt_str, _OverRaw, _Raw, _str, _strs

#: The report version this package reads: the report's ``schema`` field and
#: the end of the schema's ``$id``.
REPORT_SCHEMA = "scidex-jail.report/v1"

#: Every ``status`` of schema scidex-jail.report/v1, with what it means.
#: ``Report.status`` is a plain ``str``: compare against these names.
KNOWN_STATUSES: Mapping[str, str] = {
    "ok": "the analysis exited 0",
    "exit_nonzero": "the analysis exited with another code",
    "signaled": "the analysis died of a signal the jail did not send",
    "timeout": "the wall-clock budget ran out and the jail ended the run",
    "cancelled": "the jail got SIGTERM/SIGINT/SIGHUP (e.g. Run.cancel()) and ended the run",
    "oom_killed": "the cgroup's OOM killer killed the analysis or a descendant",
    "pids_limit": "a fork failed at the PID limit and the run failed",
    "disk_limit": "the run directory's budget filled up and the run failed",
    "output_limit": "what the analysis left went over an output budget; not every output was read (exit 123)",
    "setup_error": "the analysis could not be executed (exit 126/127); exit 125 raises JailSetupError instead",
    "delivery_failed": "the analysis ended but its outputs or report could not be delivered (exit 122)",
}

@dataclass(frozen=True, eq=False)
class Limits(_OverRaw):
    """The run's effective limits; 0 means off, and such a limit is named in
    ``none`` (switched off) or ``not_enforced`` (asked for, but no layer held
    it on this run: the cgroup's memory, swap, cpus and pids under
    ``unsafe_disable=("cgroup",)``; empty on a report of an older binary).
    Also a mapping over the JSON object (``limits["profile"]``).

    ``fields`` holds every limit the object gives, by its report field as
    the binary's schema names it (``scidex-jail profiles --schema``,
    ``report_field``: ``"limits.memory_bytes"``, ``"limits.outputs.entries"``),
    so a limit the jail adds is read with no change here; the typed
    attributes are the limits this package has always named."""

    profile: str
    timeout_seconds: float
    grace_seconds: float
    memory_bytes: int
    swap_bytes: int
    cpus: float
    pids: int
    disk_bytes: int
    shm_bytes: int
    none: Tuple[str, ...]
    not_enforced: Tuple[str, ...] = ()
    raw: _Raw = field(default_factory=dict, repr=False, metadata=COMPUTED)
    fields: Mapping[str, float] = field(default_factory=dict, repr=False, metadata=ROWS)

    @classmethod
    def from_json(cls, d: _Raw) -> "Limits":
        """From the report's ``limits`` object."""
        return _made(
            cls,
            profile=_str(d.get("profile")),
            timeout_seconds=_float(d.get("timeout_seconds")),
            grace_seconds=_float(d.get("grace_seconds")),
            memory_bytes=_int(d.get("memory_bytes")),
            swap_bytes=_int(d.get("swap_bytes")),
            cpus=_float(d.get("cpus")),
            pids=_int(d.get("pids")),
            disk_bytes=_int(d.get("disk_bytes")),
            shm_bytes=_int(d.get("shm_bytes")),
            none=_strs(d.get("none")),
            not_enforced=_strs(d.get("not_enforced")),
            raw=d,
            fields=_numbers("limits", d),
        )


def _numbers(path: str, d: _Raw, out: Optional[Dict[str, float]] = None) -> Dict[str, float]:
    """The numbers of an object and of the objects in it, by dotted path,
    in the object's order, into ``out`` (a new dict when None): one dict
    for the whole tree, not one per object merged into its parent's."""
    if out is None:
        out = {}
    for k, v in d.items():
        t = type(v)
        if t is int or t is float:  # json.loads' numbers, tried first
            out[f"{path}.{k}"] = v
        elif _is_obj(v):
            _numbers(f"{path}.{k}", v, out)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[f"{path}.{k}"] = v
    return out


@dataclass(frozen=True)
class Usage:
    """What the run used: the analysis' wall and CPU time (every process of
    the run), the largest process' peak RSS, the run directory's disk use,
    and the cgroup's counters when the run had a cgroup."""

    wall_seconds: float
    cpu_user_seconds: float
    cpu_system_seconds: float
    peak_rss_bytes: int
    disk_used_bytes: int
    #: ``enforced.cgroup.usage``, kept here beside the rest of what was used.
    cgroup: Optional[CgroupUsage] = field(metadata=COMPUTED)

    @property
    def cpu_seconds(self) -> float:
        """User plus system CPU time."""
        return self.cpu_user_seconds + self.cpu_system_seconds

    @property
    def peak_memory_bytes(self) -> int:
        """The cgroup's peak when known, else the largest process' peak RSS."""
        if self.cgroup is not None and self.cgroup.peak_memory_bytes:
            return self.cgroup.peak_memory_bytes
        return self.peak_rss_bytes


@dataclass(frozen=True)
class Phase:
    """One timed step of the run: its name, where it ran (``supervisor`` or
    ``init``) and how long it took in microseconds."""

    name: str
    where: str
    us: int


def _phases(rows: Any) -> Tuple[Phase, ...]:
    """The report's ``phases`` (~30 rows): a list made whole, then a tuple
    (a generator's step per row was a quarter of the time here), each
    row's strings and number taken as they are when json.loads made them
    so, else coerced as every field is (_str, _int)."""
    out = []
    for p in rows or ():
        if type(p) is dict or _is_obj(p):
            name, where, us = p.get("name"), p.get("where"), p.get("us")
            out.append(_made(
                Phase,
                name=name if type(name) is str else _str(name),
                where=where if type(where) is str else _str(where),
                us=us if type(us) is int else _int(us),
            ))  # fmt: skip
    return tuple(out)


@dataclass(frozen=True)
class Served:
    """A server's admission figures for a run of ``scidex-jail serve``, as
    they were when its request was accepted: ``max_runs`` and ``queue``
    (the server's ``--max-runs`` and ``--queue``), ``running`` (runs
    holding a place) and ``queued_ahead`` (requests accepted before it and
    still waiting). Its wait for a place is the ``queued`` phase.
    ``cleanups_failed`` counts the server's runs whose cleanup after their
    reply failed before then (0 in a report that lacks it)."""

    max_runs: int
    queue: int
    running: int
    queued_ahead: int
    cleanups_failed: int = 0

    @classmethod
    def from_json(cls, d: Any) -> Optional["Served"]:
        """The report's ``served``, or None when it has none (``run``)."""
        if not _is_obj(d):
            return None
        return _made(
            cls,
            max_runs=_int(d.get("max_runs")),
            queue=_int(d.get("queue")),
            running=_int(d.get("running")),
            queued_ahead=_int(d.get("queued_ahead")),
            cleanups_failed=_int(d.get("cleanups_failed")),
        )


@dataclass(frozen=True)
class SetupError:
    """Which stage failed before the analysis ran, and the jail's message."""

    stage: str
    message: str


@dataclass(frozen=True)
class Output:
    """One entry the analysis left in its run directory.

    ``path`` is relative to the run directory; ``type`` is ``file``, ``dir``,
    ``symlink`` or ``other``; ``size`` and ``sha256`` are set for regular
    files, ``link_target`` for links (never followed). A name that is not
    UTF-8 has U+FFFD in ``path`` and its exact bytes, base64, in
    ``path_b64`` (``link_target_b64`` likewise). ``skipped`` says why a
    file was not hashed or copied, or a directory not listed in full (an
    output budget, an error); ``collected_path`` is the host path of the
    copy when the run collected its outputs and this file was copied.
    """

    path: str
    type: str
    size: int = 0
    sha256: Optional[str] = None
    link_target: Optional[str] = None
    collected_path: Optional[str] = field(default=None, metadata=COMPUTED)
    path_b64: Optional[str] = None
    link_target_b64: Optional[str] = None
    skipped: Optional[str] = None
    raw: _Raw = field(default_factory=dict, repr=False, compare=False, metadata=COMPUTED)

    @classmethod
    def from_report(cls, entry: _Raw, collected_to: Optional[str]) -> "Output":
        """An :class:`Output` from one entry of the report's ``outputs``."""
        path = _str(entry.get("path"))
        typ = _str(entry.get("type")) or "file"
        skipped = _opt_str(entry.get("skipped"))
        copied = typ == "file" and bool(entry.get("sha256")) and skipped is None
        return _made(
            cls,
            path=path,
            type=typ,
            size=_int(entry.get("size")),
            sha256=_opt_str(entry.get("sha256")),
            link_target=_opt_str(entry.get("link_target")),
            collected_path=os.path.join(collected_to, path) if collected_to and copied else None,
            path_b64=_opt_str(entry.get("path_b64")),
            link_target_b64=_opt_str(entry.get("link_target_b64")),
            skipped=skipped,
            raw=entry,
        )


@dataclass(frozen=True)
class Stream:
    """One of the analysis' stdout and stderr as the jail relayed it.

    ``relayed`` False: the caller's terminal was handed to the analysis as
    it is, and nothing else is known. ``bytes`` is what the analysis wrote,
    ``delivered`` what of it reached the caller, ``dropped`` what did not,
    over the ``stdio_bytes`` budget. ``tail`` is the stream's last bytes (at
    most 4 KiB), delivered or not, as UTF-8 with invalid bytes replaced.
    ``merged`` (stderr only): the caller's stderr was its stdout's open
    file description, and the one stream is reported under stdout."""

    relayed: bool = False
    bytes: int = 0
    delivered: int = 0
    dropped: int = 0
    tail: str = ""
    merged: bool = False

    @classmethod
    def from_json(cls, d: _Raw) -> "Stream":
        return _made(
            cls,
            relayed=d.get("relayed") is True,
            bytes=_int(d.get("bytes")),
            delivered=_int(d.get("delivered")),
            dropped=_int(d.get("dropped")),
            tail=_str(d.get("tail")),
            merged=d.get("merged") is True,
        )


@dataclass(frozen=True)
class Streams:
    """The analysis' stdout and stderr (the report's ``streams``)."""

    stdout: Stream
    stderr: Stream

    @classmethod
    def from_json(cls, d: _Raw) -> "Streams":
        return _made(cls, stdout=Stream.from_json(_obj(d.get("stdout"))), stderr=Stream.from_json(_obj(d.get("stderr"))))


@dataclass(frozen=True, eq=False)
class Report(_OverRaw):
    """The jail's report, typed; ``raw`` is the JSON object as read.

    A :class:`Report` is also a read-only mapping over ``raw``
    (``report["status"]``, ``dict(report)``), as the report was before it
    had types. ``served`` and ``start`` are set for a run of a server
    (:class:`Served`; ``slot`` or ``cold``).
    ``analysis_status``, ``analysis_exit_code`` and
    ``delivery_errors`` are set with status ``delivery_failed`` (and the
    first two with ``output_limit``) only.
    """

    schema: str
    id: str
    status: str
    command: Tuple[str, ...]
    started_at: Optional[datetime.datetime]
    exit_code: int
    signal: Optional[str]
    limits: Limits
    #: The report's ``wall_seconds``, ``cpu_user_seconds``,
    #: ``cpu_system_seconds``, ``peak_rss_bytes`` and ``disk_used_bytes``.
    usage: Usage = field(metadata=GATHERS)
    enforced: Enforced
    phases: Tuple[Phase, ...]
    served: Optional[Served]
    run_dir: str
    kept: bool
    outputs: Tuple[Output, ...]
    collected_to: Optional[str]
    setup_error: Optional[SetupError]
    warnings: Tuple[str, ...]
    completion_notes: str
    analysis_status: Optional[str]
    analysis_exit_code: Optional[int]
    delivery_errors: Tuple[str, ...]
    raw: _Raw = field(repr=False, metadata=COMPUTED)
    #: The analysis' stdout and stderr; None in a report that lacks them
    #: (a jail before streams were reported).
    streams: Optional[Streams] = None
    #: How a run of ``scidex-jail serve`` began: ``slot`` (it took an init
    #: prepared ahead) or ``cold``; None for ``run``.
    start: Optional[str] = None
    #: ``"after_reply"``: a served run whose reply went before its cleanup
    #: (the init's exit, the leaf's and the run directory's removal); None:
    #: the cleanup came first, as for every ``run``.
    cleanup: Optional[str] = None
    #: What the egress network mode decided; None for another mode.
    egress: Optional[Egress] = None

    @classmethod
    def from_json(cls, d: _Raw) -> "Report":
        """Parse a report (``json.load`` of ``--report``)."""
        if not _is_obj(d):
            raise JailError(f"a report is a JSON object, not {type(d).__name__}")
        enforced = Enforced.from_json(_obj(d.get("enforced")))
        collected_to = _opt_str(d.get("collected_to"))
        se = d.get("setup_error")
        aec = d.get("analysis_exit_code")
        return _made(
            cls,
            schema=_str(d.get("schema")),
            id=_str(d.get("id")),
            status=_str(d.get("status")),
            command=_strs(d.get("command")),
            started_at=parse_time(d.get("started_at")),
            exit_code=_int(d.get("exit_code")) if "exit_code" in d else -1,
            signal=_opt_str(d.get("signal")),
            limits=Limits.from_json(_obj(d.get("limits"))),
            usage=_made(
                Usage,
                wall_seconds=_float(d.get("wall_seconds")),
                cpu_user_seconds=_float(d.get("cpu_user_seconds")),
                cpu_system_seconds=_float(d.get("cpu_system_seconds")),
                peak_rss_bytes=_int(d.get("peak_rss_bytes")),
                disk_used_bytes=_int(d.get("disk_used_bytes")),
                cgroup=enforced.cgroup.usage if enforced.cgroup else None,
            ),
            enforced=enforced,
            phases=_phases(d.get("phases")),
            served=Served.from_json(d.get("served")),
            run_dir=_str(d.get("run_dir")),
            kept=d.get("kept") is True,
            outputs=tuple(Output.from_report(e, collected_to) for e in d.get("outputs") or () if _is_obj(e)),
            collected_to=collected_to,
            setup_error=SetupError(_str(se.get("stage")), _str(se.get("message"))) if _is_obj(se) else None,
            warnings=_strs(d.get("warnings")),
            completion_notes=_str(d.get("completion_notes")),
            analysis_status=_opt_str(d.get("analysis_status")),
            analysis_exit_code=_int(aec) if isinstance(aec, int) else None,
            delivery_errors=_strs(d.get("delivery_errors")),
            raw=d,
            streams=Streams.from_json(d["streams"]) if _is_obj(d.get("streams")) else None,
            start=_opt_str(d.get("start")),
            cleanup=_opt_str(d.get("cleanup")),
            egress=Egress.from_json(d.get("egress")),
        )  # fmt: skip

    @property
    def ended_at(self) -> Optional[datetime.datetime]:
        """``started_at`` plus ``usage.wall_seconds``."""
        s = self.started_at
        return s + datetime.timedelta(seconds=self.usage.wall_seconds) if s else None


def parse_time(value: Any) -> Optional[datetime.datetime]:
    """Parse the report's RFC 3339 time (nanoseconds, ``Z``) into an aware datetime."""
    if not isinstance(value, str) or not value:
        return None
    s = value.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    # Python before 3.11 reads at most microseconds: cut the fraction to six digits.
    if "." in s:
        head, rest = s.split(".", 1)
        i = 0
        while i < len(rest) and rest[i].isdigit():
            i += 1
        s = head + "." + rest[:i][:6].ljust(6, "0") + rest[i:]
    try:
        return datetime.datetime.fromisoformat(s)
    except ValueError:
        return None
