"""What a run's row records of its stdout and stderr: the tail and the
byte counts, from the report's ``streams`` when the jail wrote them, else
from what the Python side captured; and text made fit for PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from ._capture import TAIL_BYTES
from ._report import Streams
from ._result import Result


@dataclass(frozen=True)
class Stream:
    """What the run row records of one stream; None where nothing says."""

    tail: Optional[str] = None
    size: Optional[int] = None
    dropped: Optional[int] = None


def pg_text(s: str) -> str:
    """PostgreSQL's text and jsonb hold no NUL character: an analysis that
    prints one must not make its run uncommittable."""
    return s.replace("\x00", "\ufffd")


def pg_json(v: Any) -> Any:
    """The report with :func:`pg_text` applied to every string in it."""
    if isinstance(v, str):
        return pg_text(v)
    if isinstance(v, Mapping):
        return {pg_text(str(k)): pg_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [pg_json(x) for x in v]
    return v


def _count(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _tail_of(text: str) -> str:
    return text.encode("utf-8", "replace")[-TAIL_BYTES:].decode("utf-8", "replace")


def streams_of(result: Any, report: Mapping[str, Any]) -> Dict[str, Stream]:
    """The tail and byte counts of stdout and stderr: the report's
    ``streams`` when the jail wrote them (it saw every byte); else what
    forge's bounded capture counted; else a captured text's own end."""
    section = report.get("streams")
    jail = Streams.from_json(section) if isinstance(section, Mapping) else None
    got: Dict[str, Stream] = {}
    for name in ("stdout", "stderr"):
        if jail is not None:
            s = getattr(jail, name)
            # Not relayed (a terminal), or merged into stdout's: the jail
            # recorded nothing of its own for this stream.
            got[name] = Stream() if not s.relayed or s.merged else Stream(pg_text(s.tail), s.bytes, s.dropped)
        elif getattr(result, f"{name}_bytes", None) is not None:  # forge's capture
            tail = getattr(result, f"{name}_tail", None)
            got[name] = Stream(
                pg_text(tail) if isinstance(tail, str) else None,
                _count(getattr(result, f"{name}_bytes")), _count(getattr(result, f"{name}_dropped", None)),
            )  # fmt: skip
        else:
            r = getattr(result, "result", result)  # a RuntimeResult's Result
            text = getattr(r, name, None) if isinstance(r, Result) else None
            if isinstance(text, str):
                got[name] = Stream(pg_text(_tail_of(text)), len(text.encode("utf-8", "replace")), 0)
            else:
                got[name] = Stream()
    return got
