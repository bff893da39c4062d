"""Python's keywords held to the binary's rows, both ways: every option and
limit the binary publishes with a keyword (``scidex-jail profiles --schema``,
its ``options`` and ``limits``) is a keyword of :func:`scidex_jail.run` and
:meth:`scidex_jail.Server.run`, and every keyword of theirs is a row's."""

from __future__ import annotations

import inspect
from typing import Any, Dict, Mapping, Set

import scidex_jail
from scidex_jail import _client, _limits
from scidex_jail._options import check_keywords

#: The client's own keywords, of no row: where the binary is and where a
#: run's streams go.
CLIENT = {"binary", "stdin", "stdout", "stderr"}
#: Keywords that group several rows in one mapping.
GROUPED = {"output_budget": {"output_entries", "output_bytes", "output_file_bytes", "output_time"}}


def _schema(jail_bin: str) -> Mapping[str, Any]:
    data = _limits.schema(jail_bin)
    assert data is not None, "the binary publishes no schema this package reads"
    return data


def _python_keywords() -> Set[str]:
    """The keywords run() and Server.run() take: the named arguments and
    the ``**options`` they check against."""
    keywords = set(_client.RUN_KEYWORDS | _client.JAIL_KEYWORDS)
    for fn in (scidex_jail.run, scidex_jail.Server.run):
        params = inspect.signature(fn).parameters
        keywords |= {n for n, p in params.items() if n != "self" and p.kind is not p.VAR_KEYWORD}
    return keywords


def test_every_row_keyword_is_a_python_keyword(jail_bin: str) -> None:
    schema = _schema(jail_bin)
    python = _python_keywords()
    options: Dict[str, str] = {o["keyword"]: o["name"] for o in schema["options"] if o["keyword"]}
    assert options, "the schema lists no option with a keyword"
    for keyword, name in options.items():
        assert keyword in python, f"the row {name}'s keyword {keyword!r} is not one of run()'s"
    # A limit is a keyword by its name, known or not to the package.
    for row in schema["limits"]:
        check_keywords({row["keyword"]: "none"}, frozenset(_client.RUN_KEYWORDS | _client.JAIL_KEYWORDS), jail_bin)


def test_every_python_keyword_is_a_row(jail_bin: str) -> None:
    schema = _schema(jail_bin)
    rows = {o["keyword"] for o in schema["options"] if o["keyword"]} | {row["keyword"] for row in schema["limits"]}
    for keyword in sorted(_python_keywords() - CLIENT):
        want = GROUPED.get(keyword, {keyword})
        assert want <= rows, f"run()'s keyword {keyword!r} is no row's (of {sorted(rows)})"


def test_spec_holds_every_field(jail_bin: str, tmp_path: Any) -> None:
    # build_spec fills the frozen Spec without its __init__ (_fields._made):
    # every field must be given, by its own name, and read as __init__'s.
    import dataclasses

    from scidex_jail._options import Spec, build_spec

    spec = build_spec(
        ["/bin/true"], analysis_id="spec-fields", binary=jail_bin, profile="default", timeout=60, memory="1G",
        cpus=1, pids=64, disk="1G", net="none", root=str(tmp_path), ro=[str(tmp_path)], env={"A": "b"},
        keep=True, tmp_root=str(tmp_path), output_budget={"entries": 10}, swap="1G",  # type: ignore[call-arg]
    )  # fmt: skip
    got, want = sorted(vars(spec)), sorted(f.name for f in dataclasses.fields(Spec))
    assert got == want, f"vars(build_spec(...)) = {got}, want {want}"
    twin = Spec(**{f.name: getattr(spec, f.name) for f in dataclasses.fields(Spec)})
    assert (spec == twin, repr(spec)) == (True, repr(twin)), f"build_spec(...) = {spec!r}, want {twin!r}"
