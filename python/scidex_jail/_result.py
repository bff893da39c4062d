"""The result of one run: its typed report and its captured output."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

from ._enforced import Enforced
from ._report import KNOWN_STATUSES, Limits, Output, Phase, Report, Usage, parse_time

__all__ = ["KNOWN_STATUSES", "Output", "Result", "parse_time"]


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
    whole :class:`Report`, typed, with the JSON as read in ``report.raw``.
    ``stdout``/``stderr`` hold the captured output (decoded as UTF-8,
    undecodable bytes replaced) when ``CAPTURE`` was asked for, else
    ``None``.
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
    enforced: Enforced = field(repr=False)
    report: Report = field(repr=False)
    stdout: Optional[str] = field(default=None, repr=False)
    stderr: Optional[str] = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """True when the analysis exited 0 (``status == "ok"``)."""
        return self.status == "ok"

    @property
    def limits(self) -> Limits:
        """The effective limits (profile, timeout, memory, cpus, pids, disk, ...)."""
        return self.report.limits

    @property
    def usage(self) -> Usage:
        """What the run used: times, peak memory, disk, the cgroup's counters."""
        return self.report.usage

    @property
    def phases(self) -> Tuple[Phase, ...]:
        """The run's timed steps."""
        return self.report.phases

    @property
    def run_dir(self) -> str:
        """The run directory the analysis worked in (removed afterwards unless kept)."""
        return self.report.run_dir

    @property
    def started_at(self) -> Optional[datetime.datetime]:
        """When the analysis started (UTC), from the report."""
        return self.report.started_at

    @property
    def ended_at(self) -> Optional[datetime.datetime]:
        """``started_at`` plus ``wall_seconds``."""
        return self.report.ended_at

    @property
    def output_files(self) -> Tuple[Output, ...]:
        """The regular files among ``outputs``."""
        return tuple(o for o in self.outputs if o.type == "file")

    @classmethod
    def from_report(
        cls, report: Mapping[str, Any], *, stdout: Optional[str] = None, stderr: Optional[str] = None
    ) -> "Result":
        """A :class:`Result` from a :class:`Report` or a parsed report (``json.load`` of ``--report``)."""
        rep = report if isinstance(report, Report) else Report.from_json(report)
        return cls(
            analysis_id=rep.id,
            status=rep.status,
            exit_code=rep.exit_code,
            signal=rep.signal,
            completion_notes=rep.completion_notes,
            wall_seconds=rep.usage.wall_seconds,
            cpu_seconds=rep.usage.cpu_seconds,
            peak_memory_bytes=rep.usage.peak_memory_bytes,
            outputs=rep.outputs,
            collected_to=rep.collected_to,
            enforced=rep.enforced,
            report=rep,
            stdout=stdout,
            stderr=stderr,
        )
