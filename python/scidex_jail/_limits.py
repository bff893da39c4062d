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

import functools
import json
import math
import os
import re
import subprocess
from typing import Any, Dict, Mapping, Optional, Tuple

from ._errors import JailSetupError

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
