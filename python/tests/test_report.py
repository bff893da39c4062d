"""The report, typed and checked against its JSON Schema, on real reports of
every status (tests/reports/, written by the binary). Pure: no root, no
jail, no database (``make unit``)."""

from __future__ import annotations

import copy
import glob
import json
import os
import sys
from typing import Any, Callable, Dict, List

import pytest

import scidex_jail
from scidex_jail import Report, ReportSchemaError, Result, validate_report

from conftest import REPO

pytestmark = pytest.mark.unit

SAMPLES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "reports", "*.json")))


def load(name: str) -> Dict[str, Any]:
    with open(os.path.join(os.path.dirname(__file__), "reports", f"{name}.json")) as f:
        data: Dict[str, Any] = json.load(f)
    return data


def test_samples_cover_every_status_the_binary_makes() -> None:
    got = {load(os.path.basename(p)[:-5])["status"] for p in SAMPLES}
    assert got == set(scidex_jail.KNOWN_STATUSES)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: os.path.basename(p)[:-5])
def test_real_reports_validate_and_parse(path: str) -> None:
    with open(path) as f:
        data = json.load(f)
    validate_report(data)
    r = Report.from_json(data)
    assert (r.schema, r.status, r.id) == (scidex_jail.REPORT_SCHEMA, data["status"], data["id"])
    assert r.raw is data and dict(r) == data and r["status"] == data["status"]
    assert r.command == tuple(data["command"]) and r.exit_code == data["exit_code"]
    assert r.limits.profile == "default" and r.limits["profile"] == "default"
    assert r.usage.wall_seconds == data["wall_seconds"] and r.started_at is not None
    assert all(p.where in ("supervisor", "init") and p.us >= 0 for p in r.phases)
    assert r.phases and r.phases[-1].name == "report"
    assert len(r.outputs) == len(data["outputs"]) and r.completion_notes
    assert (r.setup_error is not None) == (r.status == "setup_error")
    assert (r.analysis_status is not None) == (r.status in ("delivery_failed", "output_limit"))


def test_typed_parts_of_a_run_that_ran() -> None:
    data = load("ok")
    r = Result.from_report(data).report
    e = r.enforced
    assert e.namespaces == ("user", "mount", "pid", "net", "ipc", "uts", "cgroup")
    assert (e.host_uid, e.uid, e.no_new_privs, e.net) == (65534, 1000, True, "none")
    assert e.landlock is not None and e.landlock.abi >= 1 and "rx /usr" in e.landlock.rules
    assert e.seccomp is not None and len(e.seccomp.sha256) == 64
    assert e.cgroup is not None and e.cgroup.version in (1, 2) and e.cgroup.paths
    assert r.usage.cgroup is e.cgroup.usage and r.usage.cgroup is not None
    assert e.promises["no_postgres"] and e["net"] == "none"
    by_path = {o.path: o for o in r.outputs}
    assert by_path["table.csv"].type == "file" and by_path["table.csv"].size == 4
    assert by_path["table.csv"].collected_path == os.path.join(data["collected_to"], "table.csv")
    assert by_path["link"].link_target == "table.csv" and by_path["link"].collected_path is None
    bad = [o for o in r.outputs if o.path_b64]
    assert len(bad) == 1 and "\ufffd" in bad[0].path
    res = Result.from_report(data)
    assert res.peak_memory_bytes == r.usage.cgroup.peak_memory_bytes and res.limits == r.limits
    assert res.cpu_seconds == pytest.approx(data["cpu_user_seconds"] + data["cpu_system_seconds"])


def test_limits_no_layer_held() -> None:
    # A run without its cgroup (unsafe_disable=("cgroup",)) reports the
    # cgroup's limits as 0 and names them in not_enforced; a report of an
    # older binary, without the field, reads as every limit held.
    data = load("ok")
    data["limits"].update(memory_bytes=0, swap_bytes=0, cpus=0, pids=0, not_enforced=["memory", "swap", "cpus", "pids"])
    validate_report(data)
    r = Report.from_json(data)
    assert r.limits.not_enforced == ("memory", "swap", "cpus", "pids"), r.limits.not_enforced
    assert (r.limits.memory_bytes, r.limits.pids, r.limits.none) == (0, 0, ()), r.limits
    del data["limits"]["not_enforced"]
    assert Report.from_json(data).limits.not_enforced == ()
    data["enforced"]["mounts"]["data_dirs"] = ["data: /srv/data, read-only, also at ./data", "docs: not mounted"]
    assert Report.from_json(data).enforced.mounts.data_dirs == tuple(data["enforced"]["mounts"]["data_dirs"])
    data["limits"]["not_enforced"] = ["disk"]
    with pytest.raises(ReportSchemaError, match="not_enforced"):
        validate_report(data)


def test_typed_parts_of_a_run_that_never_started() -> None:
    r = Report.from_json(load("setup_error_cgroup"))
    assert r.setup_error is not None and r.setup_error.stage == "cgroup"
    assert r.enforced.landlock is None and r.enforced.cgroup is None and r.enforced.namespaces == ()
    assert r.usage.cgroup is None and r.usage.peak_memory_bytes == r.usage.peak_rss_bytes
    d = Report.from_json(load("delivery_failed"))
    assert (d.analysis_status, d.analysis_exit_code, d.exit_code) == ("ok", 0, 122) and d.delivery_errors


def test_packaged_schema_is_the_binarys() -> None:
    with open(os.path.join(REPO, "jail", "report", "report.schema.json"), encoding="utf-8") as f:
        assert scidex_jail.schema_text() == f.read()
    s = scidex_jail.report_schema()
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["$id"].endswith("/" + scidex_jail.REPORT_SCHEMA)
    assert s["properties"]["schema"]["const"] == scidex_jail.REPORT_SCHEMA
    assert set(s["$defs"]["status"]["enum"]) == set(scidex_jail.KNOWN_STATUSES)


def _identity(d: Dict[str, Any]) -> None:
    d["enforced"]["identity"] = {"host_groups_kept": [{"gid": 27, "name": "sudo", "inside_gid": 65534}], "why": "rootless"}


def _streams(d: Dict[str, Any]) -> None:
    s = {"relayed": True, "bytes": 3, "delivered": 3, "dropped": 0, "tail": "ok\n"}
    d["streams"] = {"stdout": s, "stderr": dict(s, bytes=0, delivered=0, tail="")}


def _output_limit(d: Dict[str, Any]) -> None:
    d.update(status="output_limit", exit_code=123, analysis_status="ok", analysis_exit_code=0)


@pytest.mark.parametrize("change", [_identity, _streams, _output_limit])
def test_additions_within_the_version_stay_valid(change: Callable[[Dict[str, Any]], None]) -> None:
    """A report of an older binary (the fixtures) validates, and so does one
    with the fields added within v1 since."""
    data = copy.deepcopy(load("ok"))
    change(data)
    validate_report(data)
    r = Report.from_json(data)
    assert r.raw is data


def _unknown_in_enforced(d: Dict[str, Any]) -> None:
    d["enforced"]["egress"] = {"allowed": ["pypi.org"]}


def _unknown_in_an_output(d: Dict[str, Any]) -> None:
    d["outputs"][0].update(hashed=True, note="over the hash budget")


@pytest.mark.parametrize("change, where", [(_unknown_in_enforced, "at /enforced"), (_unknown_in_an_output, "at /outputs/0")])
def test_a_field_nobody_declared_fails_validation_and_still_parses(
    change: Callable[[Dict[str, Any]], None], where: str
) -> None:
    """The schema names every field its binary writes and refuses any other:
    validation fails loudly on a field nobody declared (a report of a newer
    binary, checked against an older schema), while the typed parse keeps
    it in ``raw``."""
    data = copy.deepcopy(load("ok"))
    change(data)
    with pytest.raises(ReportSchemaError, match="Additional properties are not allowed") as e:
        validate_report(data)
    assert any(m.startswith(where + ":") for m in e.value.errors), e.value.errors
    assert str(e.value).endswith("validate it against that binary's `scidex-jail schema`)"), str(e.value)
    r = Report.from_json(data)
    assert r.raw is data


@pytest.mark.parametrize(
    "change, where",
    [
        (lambda d: d.pop("id"), "'id' is a required property"),
        (lambda d: d.update(status="fine"), "at /status"),
        (lambda d: d.update(schema="scidex-jail.report/v2"), "at /schema"),
        (lambda d: d.update(exit_code="0"), "at /exit_code"),
        (lambda d: d["outputs"][0].update(sha256="xyz"), "at /outputs/0/sha256"),
        (lambda d: d["limits"].update(none=["memory", "coffee"]), "at /limits/none/1"),
        (lambda d: d["enforced"]["cgroup"].update(version=3), "at /enforced/cgroup/version"),
        (lambda d: d["phases"].append({"name": "x", "where": "target", "us": 1}), "/where"),
        (lambda d: d.update(status="setup_error"), "'setup_error' is a required property"),
    ],
)
def test_breaking_reports_fail_naming_the_field(change: Callable[[Dict[str, Any]], Any], where: str) -> None:
    data = copy.deepcopy(load("ok"))
    change(data)
    with pytest.raises(ReportSchemaError, match="does not match its schema") as e:
        validate_report(data)
    assert any(where in m for m in e.value.errors), e.value.errors
    assert "scidex-jail schema" not in str(e.value)  # no unknown field: no hint of another binary


def test_validate_names_the_missing_library(monkeypatch: pytest.MonkeyPatch) -> None:
    from scidex_jail import _schema

    monkeypatch.setattr(_schema, "_validator", None)
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(ModuleNotFoundError, match="python3-jsonschema"):
        validate_report(load("ok"))


def test_lenient_parse_of_a_sparse_report() -> None:
    r = Report.from_json({"id": "x", "status": "ok"})
    assert (r.exit_code, r.limits.profile, r.enforced.cgroup, r.outputs, r.started_at) == (-1, "", None, (), None)


class _Str(str):
    pass


class _Int(int):
    pass


def _tree(x: Any) -> Any:
    """A typed report as plain values: every dataclass field, every tuple's
    entries, every mapping's items."""
    import dataclasses
    from types import MappingProxyType

    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return tuple((f.name, _tree(getattr(x, f.name))) for f in dataclasses.fields(x) if f.name != "raw")
    if isinstance(x, tuple):
        return tuple(_tree(y) for y in x)
    if isinstance(x, (dict, MappingProxyType)):
        return tuple((k, _tree(v)) for k, v in x.items())
    return x


def _other_types(x: Any) -> Any:
    """The same JSON made of what json.loads never makes: read-only
    mappings, str and int subclasses."""
    from types import MappingProxyType

    if isinstance(x, dict):
        return MappingProxyType({k: _other_types(v) for k, v in x.items()})
    if isinstance(x, list):
        return [_other_types(v) for v in x]
    if isinstance(x, str):
        return _Str(x)
    if isinstance(x, int) and not isinstance(x, bool):
        return _Int(x)
    return x


@pytest.mark.parametrize("name", ["ok", "cancelled", "setup_error"])
def test_parse_takes_other_mappings_and_subclasses_as_json(name: str) -> None:
    # The parse tries json.loads' own types first (dict, str, int, float,
    # list): a report of other mappings and subclasses reads the same.
    data = load(name)
    got, want = _tree(Report.from_json(_other_types(data))), _tree(Report.from_json(data))
    diff = [(g, w) for g, w in zip(got, want) if g != w]
    assert got == want, f"Report.from_json(other types of {name}) = {diff[:1]}, want the plain JSON's"


def test_lenient_parse_of_odd_fields() -> None:
    data = load("ok")
    data["limits"] = {"a": True, "b": 1.5, "c": {"d": 2, "e": "x", "f": {"g": 3}}, "h": [1], "i": None}
    data["phases"] = [{"name": "x", "us": 2.7}, "not a row", None, {"name": 3, "where": "w", "us": True}]
    data["enforced"]["promises"] = {"a": ["x", 1, "y", True, None], "b": "not a list"}
    r = Report.from_json(data)
    got = (r.limits.fields, r.phases, r.enforced.promises)
    want = (
        {"limits.b": 1.5, "limits.c.d": 2, "limits.c.f.g": 3},
        (scidex_jail.Phase("x", "", 2), scidex_jail.Phase("", "w", 0)),
        {"a": ("x", "y"), "b": ()},
    )
    assert got == want, f"Report.from_json(odd fields) = {got}, want {want}"


def _instances(x: Any) -> List[Any]:
    """Every dataclass instance in a typed report, the report first."""
    import dataclasses

    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [x] + [i for f in dataclasses.fields(x) if f.name != "raw" for i in _instances(getattr(x, f.name))]
    if isinstance(x, tuple):
        return [i for y in x for i in _instances(y)]
    return []


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: os.path.basename(p)[:-5])
def test_parsed_parts_hold_every_field(path: str) -> None:
    # The parse fills each frozen part's fields without its __init__
    # (_fields._made): every field must be given, by its own name.
    import dataclasses

    with open(path) as f:
        data = json.load(f)
    data["served"] = {"max_runs": 2, "queue": 64, "running": 0, "queued_ahead": 0}
    data["streams"] = {"stdout": {"relayed": True, "bytes": 1}, "stderr": {}}
    data["enforced"].setdefault("identity", {"host_ids": "leased", "host_groups_kept": [{"gid": 5, "name": "tty"}]})
    data.setdefault("setup_error", {"stage": "exec", "message": "m"})
    for part in _instances(Report.from_json(data)):
        got, want = sorted(vars(part)), sorted(f.name for f in dataclasses.fields(part))
        assert got == want, f"vars({type(part).__name__} of {os.path.basename(path)}) = {got}, want {want}"
        twin = type(part)(**{f.name: getattr(part, f.name) for f in dataclasses.fields(part)})
        assert (part == twin, repr(part)) == (True, repr(twin)), f"{type(part).__name__} parsed != made by __init__"
