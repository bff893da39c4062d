"""Limits are refused by the binary's rules, with the binary's message: the
Python package reads them from ``scidex-jail profiles --schema`` and cannot
drift from the jail (``run(cpus=0)`` fails exactly as ``--cpus 0`` does)."""

from __future__ import annotations

import subprocess
from typing import Any, Dict

import pytest

import scidex_jail
from conftest import leftovers, new_id
from scidex_jail._prepared import jail_message


def binary_refusal(jail_bin: str, flag: str) -> str:
    """What ``scidex-jail run`` says, with exit 125, for one flag."""
    p = subprocess.run([jail_bin, "run", f"--id={new_id('flag')}", flag, "--", "/bin/true"], capture_output=True, text=True)
    assert p.returncode == 125, (flag, p.returncode, p.stderr)
    return jail_message(p.stderr)


@pytest.mark.parametrize(
    "kwargs, flag",
    [
        ({"cpus": 0}, "--cpus=0"),  # 0 refused: none is written out
        ({"pids": 0}, "--pids=0"),
        ({"cpus": 5000}, "--cpus=5000"),  # CPUs: above the bound
        ({"pids": 3}, "--pids=3"),  # a count: below the bound
        ({"memory": "1M"}, "--memory=1M"),  # a size: below the bound
        ({"grace": "none"}, "--grace=none"),  # a duration that cannot be none
        ({"cpus": -1}, "--cpus=-1"),
        ({"output_budget": {"entries": 2000000}}, "--output-entries=2000000"),
    ],
)
def test_limit_refused_as_the_binary_refuses(jail_bin: str, kwargs: Dict[str, Any], flag: str) -> None:
    want = binary_refusal(jail_bin, flag)
    aid = new_id("lim")
    with pytest.raises(scidex_jail.LimitError) as e:
        scidex_jail.run(["/bin/true"], analysis_id=aid, **kwargs)
    assert e.value.message == want
    assert isinstance(e.value, ValueError) and isinstance(e.value, scidex_jail.JailSetupError)
    assert (e.value.stage, e.value.exit_code) == ("command line", 125)
    assert leftovers(aid) == []


@pytest.mark.parametrize("kwargs, off", [({"cpus": "none"}, "cpus"), ({"pids": "none"}, "pids"), ({"memory": 0}, "memory")])
def test_limit_switched_off(kwargs: Dict[str, Any], off: str) -> None:
    r = scidex_jail.run(["/bin/true"], analysis_id=new_id("off"), **kwargs)
    assert r.status == "ok", r.completion_notes
    assert off in r.limits.none, r.limits.none


def test_schema_is_versioned_and_names_every_limit(jail_bin: str) -> None:
    from scidex_jail import _limits

    data = _limits.schema(jail_bin)
    assert data is not None and data["version"] == _limits.SCHEMA_VERSION
    names = [row["name"] for row in data["limits"]]
    for name in ("timeout", "grace", "memory", "swap", "cpus", "pids", "disk", "shm",
                 "output_entries", "output_bytes", "output_file_bytes", "output_time"):  # fmt: skip
        assert name in names
    cpus = next(row for row in data["limits"] if row["name"] == "cpus")
    assert (cpus["kind"], cpus["none"], cpus["zero"], cpus["flag"]) == ("cpus", True, "refused", "--cpus")
    assert _limits.schema(jail_bin) is data  # read once per binary


def test_every_limit_of_the_schema_is_a_keyword(jail_bin: str) -> None:
    # A limit the binary publishes is a keyword by its name, passed as its
    # flag, with no line of the package naming it: swap and shm have no
    # typed keyword.
    from scidex_jail._options import build_spec

    spec = build_spec(["/bin/true"], analysis_id=new_id("kw"), binary=jail_bin, swap="1G", shm="64M")  # type: ignore[call-arg]
    cmd = spec.command("/tmp/r.json")
    assert "--swap=1G" in cmd and "--shm=64M" in cmd, cmd
    assert spec.limits() == {"swap": "1G", "shm": "64M"}
    with pytest.raises(ValueError, match="shm"):
        build_spec(["/bin/true"], analysis_id=new_id("kw"), binary=jail_bin, shm=[1])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'hugetlb'"):
        scidex_jail.run(["/bin/true"], analysis_id=new_id("kw"), binary=jail_bin, hugetlb="1G")  # type: ignore[call-arg]


def test_report_limits_by_the_schemas_fields(jail_bin: str) -> None:
    # The report's limits are read as the schema names them: every row's
    # report field, the ones without a typed attribute included.
    from scidex_jail import _limits

    data = _limits.schema(jail_bin)
    assert data is not None
    extra: Dict[str, Any] = {"shm": "32M"}
    r = scidex_jail.run(["/bin/true"], analysis_id=new_id("fields"), binary=jail_bin, **extra)
    assert r.status == "ok", r.completion_notes
    assert sorted(r.limits.fields) == sorted(row["report_field"] for row in data["limits"])
    assert r.limits.fields["limits.shm_bytes"] == 32 << 20 == r.limits.shm_bytes
