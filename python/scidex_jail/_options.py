"""Validation of run() arguments, and the run they ask for built from them.

Everything here is pure: :func:`build_spec` checks the caller's arguments and
raises :class:`ValueError` naming the argument and how to fix it, before any
process or file exists; :meth:`Spec.command` turns the checked values into the
``scidex-jail run`` command line (a list, never a shell string), and
:meth:`Spec.request` into the run object of a request to ``scidex-jail serve``
(protocol 2), the same run as the jail's ``request.Request``.
"""

from __future__ import annotations

import collections.abc
import difflib
import os
import re
import shutil
from dataclasses import dataclass
import sys
from typing import TYPE_CHECKING, AbstractSet, Dict, Mapping, Optional, Sequence, Tuple, TypedDict, Union, cast

if TYPE_CHECKING:
    # typing.Unpack is Python 3.11's; the package supports 3.9 (mypy checks
    # for it), where the annotation is only ever read by type checkers.
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

from . import _limits
from ._fields import _made
from ._limits import CountArg, CPUsArg, DurationArg, SizeArg, _count, _cpus, _duration, _output_budget, _size

#: A path argument: str or os.PathLike.
PathArg = Union[str, os.PathLike[str]]

_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_ENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: Environment variable naming the binary when ``binary=`` is not given.
BINARY_ENV = "SCIDEX_JAIL_BIN"
#: Where the Debian package installs the binary.
DEFAULT_BINARY = "/usr/bin/scidex-jail"
_INSTALL_HINT = (
    "install the scidex-jail Debian package, or build it from a checkout with "
    "`make build` (gives bin/scidex-jail) and pass binary= or set "
    f"{BINARY_ENV} to its absolute path"
)


@dataclass(frozen=True)
class Spec:
    """The checked arguments of one run (see :func:`scidex_jail.run`)."""

    binary: str
    argv: Tuple[str, ...]
    analysis_id: str
    profile: Optional[str] = None
    config: Optional[str] = None
    timeout: Optional[str] = None
    grace: Optional[str] = None
    memory: Optional[str] = None
    cpus: Optional[str] = None
    pids: Optional[str] = None
    disk: Optional[str] = None
    net: Optional[str] = None
    allow_tcp: Tuple[int, ...] = ()
    allow_hosts: Tuple[str, ...] = ()
    allow_ranges: Tuple[str, ...] = ()
    root: Optional[str] = None
    ro: Tuple[str, ...] = ()
    rw: Tuple[str, ...] = ()
    inputs: Tuple[str, ...] = ()
    env: Tuple[Tuple[str, str], ...] = ()
    collect: Optional[str] = None
    keep: bool = False
    tmp_root: Optional[str] = None
    cgroup_parent: Optional[str] = None
    unsafe_disable: Tuple[str, ...] = ()
    output_budget: Tuple[Tuple[str, str], ...] = ()
    #: Limits given by the binary's name for them that have no keyword of
    #: their own here (swap, shm, a limit added to the jail later): (name,
    #: flag, text), taken from the binary's schema (:mod:`._limits`).
    other_limits: Tuple[Tuple[str, str, str], ...] = ()

    def limits(self) -> Dict[str, str]:
        """The limits given, by the jail's name for them, as the flags'
        text: what :func:`scidex_jail._limits.check` checks."""
        given = {"timeout": self.timeout, "grace": self.grace, "memory": self.memory,
                 "cpus": self.cpus, "pids": self.pids, "disk": self.disk}  # fmt: skip
        out = {k: v for k, v in given.items() if v is not None}
        out.update((f"output_{k}", v) for k, v in self.output_budget)
        out.update((name, text) for name, _, text in self.other_limits)
        return out

    def command(self, report: str) -> list[str]:
        """The jail's command line, writing its report to ``report``.

        Every value goes in as ``--flag=value``, so a value that starts
        with ``-`` can never be read as another flag; the analysis' own
        argv follows ``--`` untouched.
        """
        return [self.binary, "run", *self.flags(report), "--", *self.argv]

    def request(self, cwd: str) -> Dict[str, object]:
        """The run as ``scidex-jail serve`` takes it: the ``run`` object of a
        request (docs/serve.md), each value under the request's name for it
        (:data:`REQUEST_KEYWORDS` maps them back), relative paths taken from
        ``cwd`` (the checked paths are absolute already). The report comes
        in the reply: no file is named."""
        run: Dict[str, object] = {"id": self.analysis_id, "command": list(self.argv), "cwd": cwd}
        for field, value in (
            ("profile", self.profile),
            ("config", self.config),
            ("net", self.net),
            ("root", self.root),
            ("collect", self.collect),
            ("tmp_root", self.tmp_root),
            ("cgroup_parent", self.cgroup_parent),
        ):
            if value is not None:
                run[field] = value
        for field, values in (
            ("limits", self.limits()),
            ("allow_tcp", list(self.allow_tcp)),
            ("allow_hosts", list(self.allow_hosts)),
            ("allow_ranges", list(self.allow_ranges)),
            ("read_only", list(self.ro)),
            ("read_write", list(self.rw)),
            ("inputs", list(self.inputs)),
            ("env", [f"{k}={v}" for k, v in self.env]),
            ("unsafe_disable", list(self.unsafe_disable)),
        ):
            if values:
                run[field] = values
        if self.keep:
            run["keep"] = True
        return run

    def flags(self, report: Optional[str] = None) -> list[str]:
        """The flags of ``scidex-jail run`` (what :meth:`command` puts
        before ``--``), writing the report to ``report`` when given."""
        cmd = [f"--id={self.analysis_id}"]
        if report is not None:
            cmd.append(f"--report={report}")
        for flag, value in (
            ("profile", self.profile),
            ("config", self.config),
            ("timeout", self.timeout),
            ("grace", self.grace),
            ("memory", self.memory),
            ("cpus", self.cpus),
            ("pids", self.pids),
            ("disk", self.disk),
            ("net", self.net),
            ("root", self.root),
            ("collect", self.collect),
            ("tmp-root", self.tmp_root),
            ("cgroup-parent", self.cgroup_parent),
        ):
            if value is not None:
                cmd.append(f"--{flag}={value}")
        cmd += [f"--output-{k.replace('_', '-')}={v}" for k, v in self.output_budget]
        cmd += [f"{flag}={text}" for _, flag, text in self.other_limits]
        if self.allow_tcp:
            cmd.append("--allow-tcp=" + ",".join(str(p) for p in self.allow_tcp))
        cmd += [f"--allow-host={h}" for h in self.allow_hosts]
        cmd += [f"--allow-range={r}" for r in self.allow_ranges]
        cmd += [f"--ro={p}" for p in self.ro]
        cmd += [f"--rw={p}" for p in self.rw]
        cmd += [f"--input={p}" for p in self.inputs]
        cmd += [f"--env={k}={v}" for k, v in self.env]
        cmd += [f"--unsafe-disable={layer}" for layer in self.unsafe_disable]
        if self.keep:
            cmd.append("--keep")
        return cmd


#: The keyword of each field of a run request (:meth:`Spec.request`) that
#: differs from the field's name; a limit (``limits.NAME``) is its own
#: keyword, but for the output budgets (``output_budget``).
_KEYWORD_OF = {"id": "analysis_id", "command": "argv", "read_only": "ro", "read_write": "rw"}


def keyword_of(field: str) -> Optional[str]:
    """The keyword of :func:`scidex_jail.run` that gives a request's field
    (its path in the request line, as a ``bad_request`` reply names it:
    ``run.read_only``, ``run.limits.memory``): ``ro``, ``memory``; None for
    a field no keyword gives (the line's own, such as ``stdio``, or
    ``run.cwd``, this process' directory)."""
    parts = field.split(".")
    if parts[0] != "run" or len(parts) < 2 or parts[1] == "cwd":
        return None
    if parts[1] == "limits" and len(parts) > 2:
        return "output_budget" if parts[2].startswith("output_") else parts[2]
    return _KEYWORD_OF.get(parts[1], parts[1])


class SpecOptions(TypedDict, total=False):
    """The per-run options that make a run's :class:`Spec`, each optional
    (left out: the profile's value or none). What each one means is
    documented once, in :meth:`scidex_jail.Jail.run`."""

    profile: Optional[str]
    timeout: Optional[DurationArg]
    grace: Optional[DurationArg]
    memory: Optional[SizeArg]
    cpus: Optional[CPUsArg]
    pids: Optional[CountArg]
    disk: Optional[SizeArg]
    net: Optional[str]
    allow_tcp: Sequence[int]
    allow_hosts: Sequence[str]
    allow_ranges: Sequence[str]
    root: Optional[PathArg]
    ro: Sequence[PathArg]
    rw: Sequence[PathArg]
    inputs: Sequence[PathArg]
    env: Optional[Mapping[str, str]]
    collect: Optional[PathArg]
    keep: bool
    output_budget: Optional[Mapping[str, Union[int, str]]]


class JailOptions(TypedDict, total=False):
    """What every run of one deployment shares: the arguments of
    :class:`scidex_jail.Jail` that the module functions :func:`scidex_jail.run`,
    :func:`~scidex_jail.start` and :func:`~scidex_jail.run_async` also take."""

    binary: Optional[PathArg]
    config: Optional[PathArg]
    tmp_root: Optional[PathArg]
    cgroup_parent: Optional[PathArg]
    unsafe_disable: Sequence[str]


class _SpecArgs(SpecOptions, JailOptions, total=False):
    """Everything :func:`build_spec` checks besides argv and the id."""


def check_keywords(given: Mapping[str, object], known: AbstractSet[str], binary: Optional[PathArg] = None) -> None:
    """Refuse a keyword that is not an option, as Python does for a
    function that declares its keywords: a TypedDict-typed ``**options`` is
    checked by type checkers only, so a misspelt option would otherwise be
    dropped silently at run time. A limit of the binary's schema (``swap``,
    ``shm``, any limit the jail has) is an option too, by the jail's name
    for it: the binary is asked (``scidex-jail profiles --schema``) only for
    a keyword that is neither close to a known one (a misspelling, refused
    at once) nor a setting of the client. Raises :class:`TypeError` naming
    it and every known one."""
    unknown = sorted(set(given) - known)
    maybe = [k for k in unknown if k not in _CLIENT_SETTINGS and not difflib.get_close_matches(k, known, n=1, cutoff=0.8)]
    if unknown and len(maybe) == len(unknown):  # only then is the binary asked
        unknown = sorted(set(unknown) - set(_limits.names(_binary_or_none(binary))))
    if unknown:
        raise TypeError(
            f"unexpected keyword argument {unknown[0]!r}: check its spelling; "
            f"the known ones are analysis_id, {', '.join(sorted(known))}"
        )


def build_spec(argv: Sequence[str], *, analysis_id: str, **options: Unpack[_SpecArgs]) -> Spec:
    """Check every argument and return the :class:`Spec` of the run.

    Raises :class:`ValueError` for a bad argument: a limit the jail
    refuses is a :class:`~scidex_jail.LimitError` (also a ValueError) with
    the jail's own message, checked by the binary's rules
    (:mod:`scidex_jail._limits`). Raises
    :class:`~scidex_jail.JailNotFoundError` when the binary is missing.
    """
    binary = find_binary(options.get("binary"))
    # Filled as Spec's __init__ fills it, without its object.__setattr__ a
    # field (_fields._made): every field given, in the order they are checked.
    spec = _made(
        Spec,
        binary=binary,
        argv=_check_argv(argv),
        analysis_id=_check_id(analysis_id),
        profile=_check_name("profile", options.get("profile")),
        config=_existing_or_none("config", options.get("config")),
        timeout=_duration("timeout", options.get("timeout")),
        grace=_duration("grace", options.get("grace")),
        memory=_size("memory", options.get("memory")),
        cpus=_cpus(options.get("cpus")),
        pids=_count("pids", options.get("pids")),
        disk=_size("disk", options.get("disk")),
        net=_net(options.get("net"), options.get("binary")),
        allow_tcp=_ports(options.get("allow_tcp", ())),
        allow_hosts=_entries("allow_hosts", options.get("allow_hosts", ()), "'eutils.ncbi.nlm.nih.gov'"),
        allow_ranges=_entries("allow_ranges", options.get("allow_ranges", ()), "'10.20.0.0/16'"),
        root=_existing_or_none("root", options.get("root")),
        ro=_paths("ro", options.get("ro", ())),
        rw=_paths("rw", options.get("rw", ())),
        inputs=_paths("inputs", options.get("inputs", ())),
        env=_env(options.get("env")),
        collect=_absolute_or_none("collect", options.get("collect")),
        keep=_flag("keep", options.get("keep", False)),
        tmp_root=_existing_or_none("tmp_root", options.get("tmp_root")),
        cgroup_parent=_absolute_or_none("cgroup_parent", options.get("cgroup_parent")),
        unsafe_disable=_layers(options.get("unsafe_disable", ())),
        output_budget=_output_budget(options.get("output_budget")),
        # Last, as the arguments are checked in order: after every other.
        other_limits=_limits.by_name(binary, cast(Mapping[str, object], options), _NAMED),
    )
    _limits.check(spec.binary, spec.limits())
    return spec


#: A client's settings: never a limit's name.
_CLIENT_SETTINGS = frozenset(JailOptions.__annotations__)

#: The keywords build_spec knows by name; any other is a limit of the
#: binary's schema (check_keywords refused the rest).
_NAMED = frozenset(_SpecArgs.__annotations__)


def _binary_or_none(binary: Optional[PathArg]) -> Optional[str]:
    """The binary, or None when none is found (its absence is reported
    where the run needs it)."""
    from ._errors import JailNotFoundError

    try:
        return find_binary(binary)
    except JailNotFoundError:
        return None


def find_binary(binary: Optional[PathArg] = None) -> str:
    """The absolute path of the scidex-jail binary.

    Looks at ``binary`` when given (and only there), else at
    ``$SCIDEX_JAIL_BIN``, else ``scidex-jail`` on ``PATH``, else
    ``/usr/bin/scidex-jail``. Raises
    :class:`~scidex_jail.JailNotFoundError` naming every path it tried.
    """
    from ._errors import JailNotFoundError

    if binary is not None:
        candidates = [os.fspath(binary)]
    elif os.environ.get(BINARY_ENV):
        candidates = [os.environ[BINARY_ENV]]
    else:
        on_path = shutil.which("scidex-jail")
        candidates = ([on_path] if on_path else ["scidex-jail on PATH"]) + [DEFAULT_BINARY]
    for c in candidates:
        if os.path.isabs(c) and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    shown = tuple(os.path.abspath(c) if c != "scidex-jail on PATH" else c for c in candidates)
    raise JailNotFoundError(shown, _INSTALL_HINT)


def _check_argv(argv: Sequence[str]) -> Tuple[str, ...]:
    if isinstance(argv, (str, bytes)):
        raise ValueError(
            f"argv must be a list of strings, not one string ({argv!r}): no shell is used; "
            "split it yourself, e.g. ['python3', 'script.py']"
        )
    out = tuple(argv)
    if not out:
        raise ValueError("argv is empty: give the command to run, e.g. ['/usr/bin/python3', 'script.py']")
    for a in out:
        if not isinstance(a, str):
            raise ValueError(f"argv entries must be str, got {type(a).__name__} {a!r}")
        if "\0" in a:
            raise ValueError(f"argv entry {a!r} contains a NUL byte")
    return out


def _check_id(analysis_id: str) -> str:
    if not isinstance(analysis_id, str) or not _ID_RE.match(analysis_id) or ".." in analysis_id:
        raise ValueError(
            f"analysis_id {analysis_id!r}: use 1-128 letters, digits, '.', '_' or '-', without '..'"
        )
    return analysis_id


def _check_name(what: str, value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str) or not value or "\0" in value or value.startswith("-"):
        raise ValueError(f"{what} {value!r}: give a name such as 'default' or 'notebook'")
    return value


def net_modes(binary: Optional[str]) -> Tuple[str, ...]:
    """The binary's network modes: the choices of its ``net`` option in
    ``scidex-jail profiles --schema`` (the rows of its table of modes),
    read once per binary; empty when it publishes no schema this package
    reads, when the binary's own refusal (exit 125) is the only check."""
    data = _limits.schema(binary) if binary is not None else None
    for option in data["options"] if data is not None else ():
        if option.get("name") == "net":
            return tuple(option["choices"])
    return ()


def _net(value: Optional[str], binary: Optional[PathArg]) -> Optional[str]:
    if value is None:
        return None
    # Its shape first, with no process; the name is the binary's to know.
    plain = isinstance(value, str) and value != "" and not value.startswith("-")
    modes = net_modes(_binary_or_none(binary)) if plain else ()
    if not plain or (modes and value not in modes):
        raise ValueError(f"net {value!r}: give one of {', '.join(modes) or 'the modes scidex-jail profiles --schema lists'}")
    return value


def _ports(ports: Sequence[int]) -> Tuple[int, ...]:
    if isinstance(ports, (str, bytes, int)):
        raise ValueError(f"allow_tcp {ports!r}: give a sequence of port numbers, e.g. (443,)")
    out = tuple(ports)
    for p in out:
        if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= 65535:
            raise ValueError(f"allow_tcp port {p!r}: give TCP port numbers 1-65535")
    return out


def _entries(what: str, values: Sequence[str], example: str) -> Tuple[str, ...]:
    # What an entry may be is the jail's to say (it refuses others with
    # exit 125, naming the entry and how to write it): the shape only here.
    if not _is_sequence(values):
        raise ValueError(f"{what} {values!r}: give a sequence, e.g. ({example},)")
    for v in values:
        if not isinstance(v, str) or not v or "\0" in v:
            raise ValueError(f"{what} entry {v!r}: give a non-empty string, e.g. {example}")
    return tuple(values)


def _is_sequence(values: object) -> bool:
    """A sequence of values, not one text: a tuple or a list (tried first:
    isinstance against typing.Sequence goes through the typing module's
    Python-level hooks, a measurable part of a served run's preparation),
    or another sequence."""
    t = type(values)
    if t is tuple or t is list:
        return True
    return not isinstance(values, (str, bytes)) and isinstance(values, collections.abc.Sequence)


def _flag(what: str, value: bool) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{what} {value!r}: give True or False")
    return value


def _absolute(what: str, value: PathArg) -> str:
    try:
        p = os.fspath(value)
    except TypeError:
        raise ValueError(f"{what} {value!r}: give a path (str or os.PathLike)") from None
    if not isinstance(p, str) or not p or "\0" in p:
        raise ValueError(f"{what} {value!r}: give a non-empty text path")
    return os.path.abspath(p)


def _existing(what: str, value: PathArg) -> str:
    p = _absolute(what, value)
    if not os.path.exists(p):
        raise ValueError(f"{what} {p!r} does not exist: create it or leave the argument out")
    return p


def _absolute_or_none(what: str, value: Optional[PathArg]) -> Optional[str]:
    return _absolute(what, value) if value is not None else None


def _existing_or_none(what: str, value: Optional[PathArg]) -> Optional[str]:
    return _existing(what, value) if value is not None else None


def _paths(what: str, values: Sequence[PathArg]) -> Tuple[str, ...]:
    if not _is_sequence(values):
        raise ValueError(f"{what} {values!r}: give a sequence of paths, e.g. ({values!r},)")
    return tuple(_existing(what, v) for v in values)


def _layers(values: Sequence[str]) -> Tuple[str, ...]:
    # Which names exist is the jail's to say (it refuses others with exit
    # 125 and the list): only the shape is checked here.
    if not _is_sequence(values):
        raise ValueError(f"unsafe_disable {values!r}: give a sequence of layer names, e.g. ('cgroup',)")
    for v in values:
        if not isinstance(v, str) or not v or "\0" in v or v.startswith("-"):
            raise ValueError(f"unsafe_disable {v!r}: give a layer name: landlock, seccomp or cgroup")
    return tuple(values)


def _env(env: Optional[Mapping[str, str]]) -> Tuple[Tuple[str, str], ...]:
    if env is None:
        return ()
    if not isinstance(env, Mapping):
        raise ValueError(f"env {env!r}: give a mapping of names to values")
    out = []
    for k, v in env.items():
        if not isinstance(k, str) or not _ENV_KEY_RE.match(k):
            raise ValueError(f"env name {k!r}: use letters, digits and '_', not starting with a digit")
        if not isinstance(v, str) or "\0" in v:
            raise ValueError(f"env {k}={v!r}: values must be str without NUL bytes")
        out.append((k, v))
    return tuple(out)
