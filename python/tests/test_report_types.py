"""Python's typed report held to the report's JSON Schema both ways: every
property of every object has a typed field of the class that types it, of
a matching type, and every typed field is a property. The schema is the
packaged one (``scidex_jail.report_schema()``: the file the binary embeds,
which test_report.py holds equal to jail/report/report.schema.json and the
Go tests hold to the Go types), so a field added to the report in Go fails
the Go schema test until the schema has it, and then this one until it is
typed here. Pure: no root, no jail (``make unit``)."""

from __future__ import annotations

import copy
import dataclasses
import datetime
import json
import os
import types
import typing
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

import pytest

import scidex_jail
from scidex_jail import Enforced, Report
from scidex_jail._fields import COMPUTED, GATHERS, ROWS

from conftest import REPO

pytestmark = pytest.mark.unit

Node = Dict[str, Any]


class _Check:
    """One walk of a class beside the schema object it types."""

    def __init__(self, schema: Node) -> None:
        self.schema = schema
        self.diffs: List[str] = []

    def resolve(self, n: Node) -> Node:
        while "$ref" in n:
            n = self.schema["$defs"][n["$ref"].removeprefix("#/$defs/")]
        return n

    def object(self, path: str, cls: type, n: Node) -> None:
        n = self.resolve(n)
        props: Node = n.get("properties", {})
        typed, rows = _json_fields(cls)
        for name in sorted(props):
            if name in typed:
                self.value(f"{path}.{name}", typed[name], props[name])
            elif not (rows and _numbers(self.resolve(props[name]), self)):
                self.diffs.append(f"{path}.{name}: in the schema, typed by no field of {cls.__name__}")
        for name in sorted(set(typed) - set(props)):
            self.diffs.append(f"{path}.{name}: {cls.__name__}.{name} is no property of the schema's object")

    def value(self, path: str, hint: Any, n: Node) -> None:
        """Hold one typed field (its type hint) to its property's schema n."""
        n = self.resolve(n)
        hint = _unwrap_optional(hint)
        want = _schema_types(n) - {"null"}
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if dataclasses.is_dataclass(hint):
            got = {"object"}
        elif origin in (tuple, Tuple):
            got = {"array"}
        elif origin in (Mapping, dict, Dict) or _is_mapping(origin):
            got = {"object"}
        else:
            got = {_PY_TYPES.get(hint, f"python {hint!r}")}
        if not got & want:
            self.diffs.append(f"{path}: typed {_name(hint)}, the schema says {sorted(want)}")
            return
        if dataclasses.is_dataclass(hint):
            self.object(path, typing.cast(type, hint), n)
        elif origin in (tuple, Tuple) and "items" in n:
            self.value(path + "[]", args[0], n["items"])
        elif got == {"object"} and isinstance(n.get("additionalProperties"), dict):
            self.value(path + "[*]", args[1], n["additionalProperties"])


_PY_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", datetime.datetime: "string"}


def _json_fields(cls: type) -> Tuple[Dict[str, Any], bool]:
    """The fields of cls that are properties of the object it types, by name,
    with their type hints (a GATHERS part's fields counted as its owner's),
    and whether a ROWS field types the object's numbers."""
    hints = typing.get_type_hints(cls)
    out: Dict[str, Any] = {}
    rows = False
    for f in dataclasses.fields(cls):
        kind = f.metadata.get("report")
        if kind == COMPUTED["report"]:
            continue
        if kind == ROWS["report"]:
            rows = True
        elif kind == GATHERS["report"]:
            inner, _ = _json_fields(hints[f.name])
            out.update(inner)
        else:
            out[f.name] = hints[f.name]
    return out, rows


def _numbers(n: Node, c: _Check) -> bool:
    """A number, or an object of numbers (limits.outputs): a row's value."""
    if _schema_types(n) & {"integer", "number"}:
        return True
    props = n.get("properties")
    return bool(props) and all(_numbers(c.resolve(p), c) for p in props.values())


def _schema_types(n: Node) -> Set[str]:
    t = n.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return set(t)
    values = ([n["const"]] if "const" in n else []) + list(n.get("enum", []))
    return {_json_type(v) for v in values}


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    return {str: "string", float: "number"}.get(type(v), "null")


def _unwrap_optional(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, getattr(types, "UnionType", typing.Union)):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return hint


def _is_mapping(origin: Any) -> bool:
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", repr(hint))


def types_vs_schema(schema: Node, cls: type = Report) -> List[str]:
    """What differs between the typed report (cls) and the schema, one line each."""
    c = _Check(schema)
    c.object("report", cls, schema)
    return c.diffs


def test_typed_report_is_the_schema() -> None:
    assert types_vs_schema(scidex_jail.report_schema()) == []


# A field added to the report, as Go would add it: at the top and inside
# enforced, optional (added within the version).
def _with_sandbox(s: Node) -> None:
    s["properties"]["sandbox"] = {"type": "string"}


def _with_egress(s: Node) -> None:
    s["$defs"]["enforced"]["properties"]["egress"] = {"type": "array", "items": {"type": "string"}}


_ReportWithSandbox = dataclasses.make_dataclass(
    "ReportWithSandbox", [("sandbox", Optional[str], dataclasses.field(default=None))], bases=(Report,), frozen=True, eq=False
)
_EnforcedWithEgress = dataclasses.make_dataclass(
    "EnforcedWithEgress", [("egress", Tuple[str, ...], dataclasses.field(default=()))], bases=(Enforced,), frozen=True, eq=False
)
_ReportWithEgress = dataclasses.make_dataclass(
    "ReportWithEgress", [("enforced", _EnforcedWithEgress)], bases=(Report,), frozen=True, eq=False
)
_ReportWithWrongSandbox = dataclasses.make_dataclass(
    "ReportWithWrongSandbox", [("sandbox", int, dataclasses.field(default=0))], bases=(Report,), frozen=True, eq=False
)


@pytest.mark.parametrize(
    "change, cls, want",
    [
        (_with_sandbox, Report, ["report.sandbox: in the schema, typed by no field of Report"]),
        (_with_sandbox, _ReportWithSandbox, []),
        (_with_sandbox, _ReportWithWrongSandbox, ["report.sandbox: typed int, the schema says ['string']"]),
        (None, _ReportWithSandbox, ["report.sandbox: ReportWithSandbox.sandbox is no property of the schema's object"]),
        (_with_egress, Report, ["report.enforced.egress: in the schema, typed by no field of Enforced"]),
        (_with_egress, _ReportWithEgress, []),
    ],
    ids=["schema only", "typed", "typed wrong", "typed only", "nested, schema only", "nested, typed"],
)
def test_hypothetical_report_field(change: Any, cls: type, want: List[str]) -> None:
    """A property added to the schema (as the Go test makes the schema take a
    field added in Go) fails until Python types it, with a matching type; a
    typed field the schema lacks fails too."""
    schema = copy.deepcopy(scidex_jail.report_schema())
    if change is not None:
        change(schema)
    assert types_vs_schema(schema, cls) == want


def _unset(v: Any) -> bool:
    return v is None or v == "" or v == () or v == {} or v is False or v == 0


def _empty_fields(path: str, obj: Any) -> List[str]:
    """The typed fields (and their parts') that hold their zero value."""
    out: List[str] = []
    for f in dataclasses.fields(obj):
        if f.metadata.get("report") in (COMPUTED["report"], ROWS["report"]):
            continue
        v = getattr(obj, f.name)
        if _unset(v):
            out.append(f"{path}.{f.name}")
        elif dataclasses.is_dataclass(v):
            out += _empty_fields(f"{path}.{f.name}", v)
        elif isinstance(v, tuple):
            out += [e for x in v if dataclasses.is_dataclass(x) for e in _empty_fields(f"{path}.{f.name}[]", x)]
    return out


def test_parse_reads_every_typed_field() -> None:
    """Report.from_json reads every field it types: the Go tests' report
    with every field set (jail/report/testdata/full.json, strings "x",
    numbers 1 or 1.5, booleans true) leaves no typed field at its zero."""
    with open(os.path.join(REPO, "jail", "report", "testdata", "full.json"), encoding="utf-8") as f:
        data = json.load(f)
    r = Report.from_json(data)
    assert _empty_fields("report", r) == []
    assert r.enforced.cgroup is not None and r.usage.cgroup == r.enforced.cgroup.usage
    assert r.limits.fields["limits.outputs.entries"] == 1 and r.limits.fields["limits.cpus"] == 1.5
