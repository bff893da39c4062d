"""The report's JSON, read leniently: a mapping kept whole beside the typed
fields (:class:`_OverRaw`), and the coercions that give a missing field
its zero value."""

from __future__ import annotations

import collections.abc
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Tuple, Type, TypeVar

if TYPE_CHECKING:
    # typing.TypeGuard is Python 3.10's; the package supports 3.9 (mypy
    # checks for it), where the annotation is only ever read by type checkers.
    from typing_extensions import TypeGuard

_Raw = Mapping[str, Any]

# How a field of a typed part stands to the report's JSON Schema, as
# dataclass field metadata, for the test that holds the types to the schema
# both ways (tests/test_report_types.py). A field without any is the
# property of the same name of the object its class types.

#: Not a property of the report: the JSON as read (``raw``), or a value this
#: package works out (a collected path, a copy kept where it is handy).
COMPUTED: Mapping[str, str] = MappingProxyType({"report": "computed"})
#: A part whose fields are properties of the object its owner types, gathered
#: under one name (``Report.usage``: ``wall_seconds``, ``peak_rss_bytes``, ...).
GATHERS: Mapping[str, str] = MappingProxyType({"report": "gathers"})
#: Every number of the object, by dotted path (``Limits.fields``): a limit
#: is a row of the jail's table, read with no change here.
ROWS: Mapping[str, str] = MappingProxyType({"report": "rows"})


class _OverRaw(Mapping[str, Any]):
    """A typed part of the report that is also a read-only mapping over its
    JSON object, ``raw``: ``limits["profile"]``, ``dict(report)``, as the
    report was read before it had types. Equality is the JSON's."""

    raw: _Raw

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)


# The checks below try the concrete types json.loads makes first (dict,
# int, float, list): isinstance against typing.Mapping goes through the
# typing module's and abc's Python-level hooks, and was most of the time a
# served run's client spent building its Report (issue 36). The fallback
# is the check as it always was (None, a field a report lacks, is no
# mapping), so another mapping or an int subclass is read as before.


#: The other types json.loads makes, none of them a mapping: a value of
#: one is no object without the abc's check (a report's every number and
#: list passes here, ~60 a report, at ~0.3 us each through the abc).
_NOT_OBJ = frozenset((str, int, float, bool, list, type(None)))


def _is_obj(v: Any) -> TypeGuard[_Raw]:
    """``v`` is a JSON object: a dict, or another mapping."""
    t = type(v)
    return t is dict or t not in _NOT_OBJ and isinstance(v, collections.abc.Mapping)


def _obj(v: Any) -> _Raw:
    return v if _is_obj(v) else {}


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _opt_str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) and v else None


def _int(v: Any) -> int:
    t = type(v)
    if t is int:
        return v  # type: ignore[no-any-return]
    return int(v) if t is float or isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def _float(v: Any) -> float:
    if type(v) is float:
        return v
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


#: isinstance(x, str) as a C callable: filter() with it keeps a list's
#: strings with no Python-level step per entry (a report's landlock rules,
#: ~45, took 2.8 us through a comprehension, 1.5 this way).
_is_str = str.__instancecheck__


def _strs(v: Any) -> Tuple[str, ...]:
    return tuple(filter(_is_str, v)) if isinstance(v, list) else ()


_T = TypeVar("_T")
_new = object.__new__


def _made(cls: Type[_T], **fields: Any) -> _T:
    """An instance of the frozen dataclass ``cls`` with ``fields``, every
    one given, put where its ``__init__`` puts them (the instance's
    ``__dict__``) without calling it: that ``__init__`` sets each field
    through ``object.__setattr__`` (the class' own refuses), some 1.5k
    instructions a field in CPython 3.11, and a served run's report has
    about 200 (issue 36). The object is the same (its fields, equality,
    hash, repr); none of the report's classes has a ``__post_init__``. A
    test holds every parsed instance's fields whole (tests/test_report.py)."""
    obj = _new(cls)
    obj.__dict__.update(fields)
    return obj
