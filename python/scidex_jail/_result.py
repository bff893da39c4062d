"""The result of one run, read from the jail's JSON report."""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

#: Every ``status`` the jail is known to report (schema scidex-jail.report/v1).
#: ``Result.status`` is a plain ``str``: a newer jail may add values, so
#: compare against these names rather than assume the set is closed.
KNOWN_STATUSES: Mapping[str, str] = {
    "ok": "the analysis exited 0",
    "exit_nonzero": "the analysis exited with another code",
    "signaled": "the analysis died of a signal the jail did not send",
    "timeout": "the wall-clock budget ran out and the jail ended the run",
    "cancelled": "the jail got SIGTERM/SIGINT/SIGHUP (e.g. Run.cancel()) and ended the run",
    "oom_killed": "the cgroup's OOM killer killed the analysis or a descendant",
    "pids_limit": "a fork failed at the PID limit and the run failed",
    "disk_limit": "the run directory's budget filled up and the run failed",
    "setup_error": "the analysis could not be executed (exit 126/127); exit 125 raises JailSetupError instead",
    "delivery_failed": "the analysis ended but its outputs or report could not be delivered (exit 122)",
    "output_limit": "what the analysis left went over an output budget; not every output was read (exit 123)",
}


@dataclass(frozen=True)
class Output:
    """One entry the analysis left in its run directory.

    ``path`` is relative to the run directory; ``type`` is ``file``, ``dir``,
    ``symlink`` or ``other``; ``size`` and ``sha256`` are set for regular
    files, ``link_target`` for links (never followed). ``skipped`` says why
    a file was not hashed or copied, or a directory not listed in full (an
    output budget, an error); ``collected_path`` is the host path of the
    copy when the run collected its outputs and this file was copied.
    """

    path: str
    type: str
    size: int = 0
    sha256: Optional[str] = None
    link_target: Optional[str] = None
    collected_path: Optional[str] = None
    skipped: Optional[str] = None

    @classmethod
    def from_report(cls, entry: Mapping[str, Any], collected_to: Optional[str]) -> "Output":
        """An :class:`Output` from one entry of the report's ``outputs``."""
        path = str(entry["path"])
        typ = str(entry.get("type", "file"))
        skipped = entry.get("skipped") or None
        copied = typ == "file" and bool(entry.get("sha256")) and not skipped
        return cls(
            path=path,
            type=typ,
            size=int(entry.get("size") or 0),
            sha256=entry.get("sha256") or None,
            link_target=entry.get("link_target") or None,
            collected_path=os.path.join(collected_to, path) if collected_to and copied else None,
            skipped=skipped,
        )


@dataclass(frozen=True)
class Result:
    """What one run did, from its report.

    ``status`` is one reason the run ended (see :data:`KNOWN_STATUSES`);
    ``exit_code`` is what the jail exited with (the analysis' own code,
    128+n after signal n); ``signal`` the signal's name when the analysis
    died of one; ``completion_notes`` one sentence for logs (it names the
    limit that stopped a run: the timeout, the memory limit, the PID limit).
    ``wall_seconds``, ``cpu_seconds`` (user + system of every process of
    the run) and ``peak_memory_bytes`` (the cgroup's peak, or the largest
    process when the run had no cgroup) are the usage; ``outputs`` every
    entry left in the run directory; ``collected_to`` where they were
    copied (``collect=``); ``enforced`` what held the run; ``report`` the
    whole report as a dict. ``stdout``/``stderr`` hold the captured output
    (decoded as UTF-8, undecodable bytes replaced) when ``CAPTURE`` was
    asked for, else ``None``.
    """

    analysis_id: str
    status: str
    exit_code: int
    signal: Optional[str]
    completion_notes: str
    wall_seconds: float
    cpu_seconds: float
    peak_memory_bytes: int
    outputs: Tuple[Output, ...]
    collected_to: Optional[str]
    enforced: Mapping[str, Any] = field(repr=False)
    report: Mapping[str, Any] = field(repr=False)
    stdout: Optional[str] = field(default=None, repr=False)
    stderr: Optional[str] = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """True when the analysis exited 0 (``status == "ok"``)."""
        return self.status == "ok"

    @property
    def limits(self) -> Mapping[str, Any]:
        """The effective limits (profile, timeout, memory, cpus, pids, disk, ...)."""
        return self.report.get("limits") or {}

    @property
    def run_dir(self) -> str:
        """The run directory the analysis worked in (removed afterwards unless kept)."""
        return str(self.report.get("run_dir", ""))

    @property
    def started_at(self) -> Optional[datetime.datetime]:
        """When the analysis started (UTC), from the report."""
        return parse_time(self.report.get("started_at"))

    @property
    def ended_at(self) -> Optional[datetime.datetime]:
        """``started_at`` plus ``wall_seconds``."""
        s = self.started_at
        return s + datetime.timedelta(seconds=self.wall_seconds) if s else None

    @property
    def output_files(self) -> Tuple[Output, ...]:
        """The regular files among ``outputs``."""
        return tuple(o for o in self.outputs if o.type == "file")

    @classmethod
    def from_report(
        cls, report: Mapping[str, Any], *, stdout: Optional[str] = None, stderr: Optional[str] = None
    ) -> "Result":
        """A :class:`Result` from a parsed report (``json.load`` of ``--report``)."""
        enforced = report.get("enforced") or {}
        usage = ((enforced.get("cgroup") or {}).get("usage")) or {}
        collected_to = report.get("collected_to") or None
        peak = int(usage.get("peak_memory_bytes") or report.get("peak_rss_bytes") or 0)
        return cls(
            analysis_id=str(report.get("id", "")),
            status=str(report.get("status", "")),
            exit_code=int(report.get("exit_code", -1)),
            signal=report.get("signal") or None,
            completion_notes=str(report.get("completion_notes", "")),
            wall_seconds=float(report.get("wall_seconds") or 0.0),
            cpu_seconds=float(report.get("cpu_user_seconds") or 0.0) + float(report.get("cpu_system_seconds") or 0.0),
            peak_memory_bytes=peak,
            outputs=tuple(Output.from_report(e, collected_to) for e in report.get("outputs") or ()),
            collected_to=collected_to,
            enforced=enforced,
            report=report,
            stdout=stdout,
            stderr=stderr,
        )


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
