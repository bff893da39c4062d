"""The report's ``egress``: what the egress network mode decided."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

from ._fields import _float, _int, _is_obj, _obj, _Raw, _str, _strs


@dataclass(frozen=True)
class EgressLookup:
    """One question the analysis asked of the jail's DNS stub, with one
    answer (``decision`` ``answered`` or ``refused``, and why:
    ``reason``); ``count`` repeats of it."""

    name: str = ""
    type: str = ""
    decision: str = ""
    answer: str = ""
    reason: str = ""
    detail: str = ""
    count: int = 0

    @classmethod
    def from_json(cls, d: _Raw) -> "EgressLookup":
        return cls(
            name=_str(d.get("name")), type=_str(d.get("type")), decision=_str(d.get("decision")),
            answer=_str(d.get("answer")), reason=_str(d.get("reason")), detail=_str(d.get("detail")),
            count=_int(d.get("count")),
        )  # fmt: skip


@dataclass(frozen=True)
class EgressConnection:
    """One connection the jail's supervisor decided on: to ``name`` on
    ``port``, ``via`` ``captured`` (a fake address of the DNS stub) or
    ``proxy`` (HTTPS_PROXY), the address it ``dialled``, its ``decision``
    (``allowed``, ``refused``, ``failed``, ``cut``) and ``reason``, and
    the bytes each way."""

    name: str = ""
    port: int = 0
    via: str = ""
    dialled: str = ""
    decision: str = ""
    reason: str = ""
    detail: str = ""
    bytes_up: int = 0
    bytes_down: int = 0
    duration_seconds: float = 0.0

    @classmethod
    def from_json(cls, d: _Raw) -> "EgressConnection":
        return cls(
            name=_str(d.get("name")), port=_int(d.get("port")), via=_str(d.get("via")), dialled=_str(d.get("dialled")),
            decision=_str(d.get("decision")), reason=_str(d.get("reason")), detail=_str(d.get("detail")),
            bytes_up=_int(d.get("bytes_up")), bytes_down=_int(d.get("bytes_down")),
            duration_seconds=_float(d.get("duration_seconds")),
        )  # fmt: skip


@dataclass(frozen=True)
class EgressTotals:
    """Every lookup and connection, counted whether or not kept."""

    lookups: int = 0
    lookups_refused: int = 0
    connections: int = 0
    allowed: int = 0
    refused: int = 0
    failed: int = 0
    cut: int = 0
    bytes_up: int = 0
    bytes_down: int = 0

    @classmethod
    def from_json(cls, d: _Raw) -> "EgressTotals":
        return cls(**{f: _int(d.get(f)) for f in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Egress:
    """The report's ``egress`` (network mode ``egress`` only): the allowed
    ``hosts`` and ``ranges``, each name looked up and each connection,
    at most the output-entries budget of them (``dropped``: those not
    kept), and exact ``totals``."""

    hosts: Tuple[str, ...] = ()
    ranges: Tuple[str, ...] = ()
    lookups: Tuple[EgressLookup, ...] = ()
    connections: Tuple[EgressConnection, ...] = ()
    dropped: int = 0
    totals: EgressTotals = EgressTotals()

    @classmethod
    def from_json(cls, d: object) -> Optional["Egress"]:
        if not isinstance(d, Mapping):
            return None
        return cls(
            hosts=_strs(d.get("hosts")), ranges=_strs(d.get("ranges")),
            lookups=tuple(EgressLookup.from_json(x) for x in d.get("lookups") or () if _is_obj(x)),
            connections=tuple(EgressConnection.from_json(x) for x in d.get("connections") or () if _is_obj(x)),
            dropped=_int(d.get("dropped")), totals=EgressTotals.from_json(_obj(d.get("totals"))),
        )  # fmt: skip
