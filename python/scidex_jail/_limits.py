"""The jail's limits, validated by the binary's own table.

The rules of a limit (whether ``none`` switches it off, what a 0 means, its
bounds) and the messages that refuse a value are the binary's: it prints
them with ``scidex-jail profiles --schema``, read here once per binary and
cached. A value the binary would refuse is refused here with the binary's
message, as a :class:`LimitError` (a :class:`~scidex_jail.JailSetupError`
with exit code 125 and stage ``"command line"``, and a :class:`ValueError`),
before any run starts. Only the shape of a value (a number, a string) is
checked by Python itself (:mod:`._options`).
"""

from __future__ import annotations

import datetime
import functools
import json
import math
import os
import re
import subprocess
from typing import AbstractSet, Any, Mapping, Optional, Tuple, Union

from ._errors import JailSetupError

#: A duration: seconds (int/float), a timedelta, or a Go-style string ("90s", "1.5m"), or "none".
DurationArg = Union[int, float, datetime.timedelta, str]
#: A size: bytes (int) or a string with a binary unit ("512M", "2G"), or "none".
SizeArg = Union[int, str]
#: A CPU quota (0.5, 2) or "none".
CPUsArg = Union[float, str]
#: A count (512) or "none".
CountArg = Union[int, str]

_SIZE_RE = re.compile(r"^[0-9]+(\.[0-9]+)?([KMGT](i?B)?|B)?$", re.IGNORECASE)
_DURATION_RE = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")

#: The schema version this package reads.
SCHEMA_VERSION = 1
#: Where a message of the schema takes the text the user gave.
_PLACEHOLDER = "{text}"

_SIZE_UNITS = {"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20,
               "G": 30, "GB": 30, "GIB": 30, "T": 40, "TB": 40, "TIB": 40}  # fmt: skip
_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_DURATION_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class LimitError(JailSetupError, ValueError):
    """A limit the jail refuses, refused before the run with the jail's own
    message (``message``, e.g. ``--cpus: 0 CPUs is refused: ...``), exactly
    as ``scidex-jail run`` would refuse it (exit code 125)."""

    def __init__(self, message: str) -> None:
        super().__init__("command line", message, exit_code=125)


def schema(binary: str) -> Optional[Mapping[str, Any]]:
    """The binary's schema of limits and run options, read once per binary
    (by path, modification time and size, so a rebuilt binary is read
    again); None when the binary publishes none this package reads (an
    older jail, a stand-in): the binary's own refusal, exit 125 and a
    :class:`~scidex_jail.JailSetupError` with the same message, is then
    the only check."""
    st = os.stat(binary)
    return _read_schema(binary, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _read_schema(binary: str, _mtime: int, _size: int) -> Optional[Mapping[str, Any]]:
    try:
        p = subprocess.run([binary, "profiles", "--schema"], capture_output=True, timeout=30)
        data = json.loads(p.stdout) if p.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != SCHEMA_VERSION:
        return None
    return data


def rows(binary: Optional[str]) -> Mapping[str, Mapping[str, Any]]:
    """The binary's limits by name (empty when it publishes no schema)."""
    data = schema(binary) if binary is not None else None
    return {row["name"]: row for row in data["limits"]} if data is not None else {}


def names(binary: Optional[str]) -> Tuple[str, ...]:
    """The names of the binary's limits: each is a keyword of a run."""
    return tuple(rows(binary))


def shape(kind: str, what: str, value: object) -> str:
    """A limit's argument of the schema's kind (size, duration, count,
    cpus) as its flag's text, its shape checked (its value is the
    binary's rules' to check: :func:`check`)."""
    if kind == "size":
        text = _size(what, value)  # type: ignore[arg-type]
    elif kind == "duration":
        text = _duration(what, value)  # type: ignore[arg-type]
    elif kind == "count":
        text = _count(what, value)  # type: ignore[arg-type]
    else:
        text = _cpus(value, what)  # type: ignore[arg-type]
    assert text is not None  # None values are left out before
    return text


def by_name(binary: str, options: Mapping[str, object], named: AbstractSet[str]) -> Tuple[Tuple[str, str, str], ...]:
    """The limits among options given by the binary's name for them (the
    keywords not in named, which check_keywords let through): (name, flag,
    text), their shape checked by their kind."""
    given = {k: v for k, v in options.items() if k not in named and v is not None}
    table = rows(binary) if given else {}
    out = []
    for name, value in given.items():
        row = table.get(name)
        if row is None:
            raise TypeError(f"unexpected keyword argument {name!r}: the jail {binary} has no limit of that name")
        budget = options.get("output_budget")
        if isinstance(budget, Mapping) and name.startswith("output_") and name[len("output_"):] in budget:
            raise ValueError(f"{name} and output_budget[{name[len('output_'):]!r}] are both given: give one")
        out.append((name, row["flag"], shape(row["kind"], name, value)))
    return tuple(out)


def check(binary: str, values: Mapping[str, str]) -> None:
    """Check each limit's text (by limit name: cpus, output_time, ...) by
    the binary's rules; raise :class:`LimitError` with its message."""
    data = schema(binary) if values else None
    if data is None:
        return
    rows = {row["name"]: row for row in data["limits"]}
    for name, text in values.items():
        row = rows.get(name)  # a limit the binary does not know: its own refusal
        msg = _refusal(row, text) if row is not None else None
        if msg is not None:
            raise LimitError(msg.replace(_PLACEHOLDER, text))


def _refusal(row: Mapping[str, Any], text: str) -> Optional[str]:
    """The schema's message that refuses text, or None when it is fine."""
    messages: Mapping[str, str] = row["messages"]
    if text == "none":
        return None if row["none"] else messages.get("unreadable")
    value = _amount(row["kind"], text)
    if value is None:
        return messages.get("unreadable")
    if value < 0:
        return messages.get("negative")
    if value == 0:
        return messages.get("zero") if row["zero"] == "refused" else None
    if row["min"] is not None and value < row["min"]:
        return messages.get("below")
    if row["max"] is not None and value > row["max"]:
        return messages.get("above")
    return None


def _amount(kind: str, text: str) -> Optional[float]:
    """text as a number in the schema's units (bytes, seconds, a count,
    CPUs), or None when it is not one."""
    try:
        if kind == "cpus":
            v = float(text)
            return v if math.isfinite(v) else None
        if kind == "count":
            return float(int(text, 10))
        if kind == "size":
            num = text.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
            return float(math.floor(float(num) * (1 << _SIZE_UNITS[text[len(num):].upper()])))
        return _seconds(text)
    except (ValueError, KeyError):
        return None


def _seconds(text: str) -> Optional[float]:
    """A Go duration (``90s``, ``1h30m``, ``-1.5s``, ``0``) in seconds."""
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    if body == "0":
        return 0.0
    parts = _DURATION_PART.findall(body)
    if not parts or "".join(n + u for n, u in parts) != body:
        return None
    return sign * sum(float(n) * _DURATION_UNIT[u] for n, u in parts)


# The shape of a limit argument, turned into its flag's text: only the
# shape (a number, a string) is Python's to check.


def _duration(what: str, value: Optional[DurationArg]) -> Optional[str]:
    if value is None:
        return None
    if value == "none":
        return "none"
    if isinstance(value, bool):
        raise ValueError(f"{what} {value!r}: give seconds, a timedelta or a string such as '90s'")
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, str):
        if value != "0" and not _DURATION_RE.match(value):
            raise ValueError(f"{what} {value!r}: give seconds or a duration such as '90s', '30m', '1.5s'")
        return value
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} {value!r}: give a non-negative number of seconds (0 = none)")
    if value == 0:
        return "0"
    if float(value).is_integer():
        return f"{int(value)}s"
    ms = round(value * 1000)
    if ms == 0:
        raise ValueError(f"{what} {value!r}: less than a millisecond; 0 means none")
    return f"{ms}ms"


def _size(what: str, value: Optional[SizeArg]) -> Optional[str]:
    if value is None:
        return None
    if value == "none":
        return "none"
    if isinstance(value, bool):
        raise ValueError(f"{what} {value!r}: give bytes or a size such as '512M'")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{what} {value!r}: give a non-negative number of bytes (0 = none)")
        return str(value)
    if isinstance(value, str) and _SIZE_RE.match(value.strip()):
        return value.strip()
    raise ValueError(f"{what} {value!r}: give bytes (int) or a size with a binary unit such as '512M' or '2G'")


def _cpus(value: Optional[CPUsArg], what: str = "cpus") -> Optional[str]:
    if value is None:
        return None
    if value == "none":
        return "none"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} {value!r}: give a number of CPUs such as 0.5 or 2, or 'none' for no quota")
    return repr(float(value)) if float(value) != int(value) else str(int(value))


#: The jail's output budgets (README "Output budgets"), by key of
#: ``output_budget``: a whole number of entries, sizes, a duration.
OUTPUT_BUDGETS = ("entries", "bytes", "file_bytes", "time")


def _output_budget(value: Optional[Mapping[str, Union[int, str]]]) -> Tuple[Tuple[str, str], ...]:
    """``{"entries": 10000, "bytes": "1G", "file_bytes": "none", "time": "3m"}``:
    each budget left out comes from the profile; ``"none"`` switches one off;
    0 is refused, as the jail refuses it (a budget's absence is written out)."""
    if value is None:
        return ()
    out = []
    for k, v in value.items():
        if k not in OUTPUT_BUDGETS:
            raise ValueError(f"output_budget {k!r}: the budgets are {', '.join(OUTPUT_BUDGETS)}")
        if v == "none":
            out.append((k, "none"))
            continue
        checked = _duration(f"output_budget {k}", v) if k == "time" else _size(f"output_budget {k}", v)
        if k == "entries" and not (isinstance(v, int) or str(v).isdigit()):
            raise ValueError(f"output_budget entries {v!r}: give a whole number, or 'none'")
        if checked is None or checked == "0":
            raise ValueError(f"output_budget {k} {v!r}: 0 is refused; give a budget, or 'none' for no budget")
        out.append((k, checked))
    return tuple(out)


def _count(what: str, value: Optional[CountArg]) -> Optional[str]:
    if value is None:
        return None
    if value == "none":
        return "none"
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} {value!r}: give a whole number, or 'none' for no limit")
    return str(value)
