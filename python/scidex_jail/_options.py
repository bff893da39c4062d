"""Validation of run() arguments and the jail's command line built from them.

Everything here is pure: :func:`build_spec` checks the caller's arguments and
raises :class:`ValueError` naming the argument and how to fix it, before any
process or file exists; :meth:`Spec.argv` turns the checked values into the
``scidex-jail run`` command line (a list, never a shell string).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Tuple, Union

from . import _limits
from ._limits import CountArg, CPUsArg, DurationArg, SizeArg, _count, _cpus, _duration, _output_budget, _size

#: A path argument: str or os.PathLike.
PathArg = Union[str, os.PathLike[str]]

_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_ENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
NET_MODES = ("none", "loopback", "host")

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

    def limits(self) -> Dict[str, str]:
        """The limits given, by the jail's name for them, as the flags'
        text: what :func:`scidex_jail._limits.check` checks."""
        given = {"timeout": self.timeout, "grace": self.grace, "memory": self.memory,
                 "cpus": self.cpus, "pids": self.pids, "disk": self.disk}  # fmt: skip
        out = {k: v for k, v in given.items() if v is not None}
        out.update((f"output_{k}", v) for k, v in self.output_budget)
        return out

    def command(self, report: str) -> list[str]:
        """The jail's command line, writing its report to ``report``.

        Every value goes in as ``--flag=value``, so a value that starts
        with ``-`` can never be read as another flag; the analysis' own
        argv follows ``--`` untouched.
        """
        cmd = [self.binary, "run", f"--id={self.analysis_id}", f"--report={report}"]
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
        if self.allow_tcp:
            cmd.append("--allow-tcp=" + ",".join(str(p) for p in self.allow_tcp))
        cmd += [f"--ro={p}" for p in self.ro]
        cmd += [f"--rw={p}" for p in self.rw]
        cmd += [f"--input={p}" for p in self.inputs]
        cmd += [f"--env={k}={v}" for k, v in self.env]
        cmd += [f"--unsafe-disable={layer}" for layer in self.unsafe_disable]
        if self.keep:
            cmd.append("--keep")
        cmd.append("--")
        cmd += self.argv
        return cmd


def build_spec(
    argv: Sequence[str],
    *,
    analysis_id: str,
    profile: Optional[str] = None,
    config: Optional[PathArg] = None,
    timeout: Optional[DurationArg] = None,
    grace: Optional[DurationArg] = None,
    memory: Optional[SizeArg] = None,
    cpus: Optional[CPUsArg] = None,
    pids: Optional[CountArg] = None,
    disk: Optional[SizeArg] = None,
    net: Optional[str] = None,
    allow_tcp: Sequence[int] = (),
    root: Optional[PathArg] = None,
    ro: Sequence[PathArg] = (),
    rw: Sequence[PathArg] = (),
    inputs: Sequence[PathArg] = (),
    env: Optional[Mapping[str, str]] = None,
    collect: Optional[PathArg] = None,
    keep: bool = False,
    tmp_root: Optional[PathArg] = None,
    cgroup_parent: Optional[PathArg] = None,
    unsafe_disable: Sequence[str] = (),
    binary: Optional[PathArg] = None,
    output_budget: Optional[Mapping[str, Union[int, str]]] = None,
) -> Spec:
    """Check every argument and return the :class:`Spec` of the run.

    Raises :class:`ValueError` for a bad argument: a limit the jail
    refuses is a :class:`~scidex_jail.LimitError` (also a ValueError) with
    the jail's own message, checked by the binary's rules
    (:mod:`scidex_jail._limits`). Raises
    :class:`~scidex_jail.JailNotFoundError` when the binary is missing.
    """
    spec = Spec(
        binary=find_binary(binary),
        argv=_check_argv(argv),
        analysis_id=_check_id(analysis_id),
        profile=_check_name("profile", profile),
        config=_existing("config", config) if config is not None else None,
        timeout=_duration("timeout", timeout),
        grace=_duration("grace", grace),
        memory=_size("memory", memory),
        cpus=_cpus(cpus),
        pids=_count("pids", pids),
        disk=_size("disk", disk),
        net=_net(net),
        allow_tcp=_ports(allow_tcp),
        root=_existing("root", root) if root is not None else None,
        ro=_paths("ro", ro),
        rw=_paths("rw", rw),
        inputs=_paths("inputs", inputs),
        env=_env(env),
        collect=_absolute("collect", collect) if collect is not None else None,
        keep=_flag("keep", keep),
        tmp_root=_existing("tmp_root", tmp_root) if tmp_root is not None else None,
        cgroup_parent=_absolute("cgroup_parent", cgroup_parent) if cgroup_parent is not None else None,
        unsafe_disable=_layers(unsafe_disable),
        output_budget=_output_budget(output_budget),
    )
    _limits.check(spec.binary, spec.limits())
    return spec


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


def _net(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    if value not in NET_MODES:
        raise ValueError(f"net {value!r}: give one of {', '.join(NET_MODES)}")
    return value


def _ports(ports: Sequence[int]) -> Tuple[int, ...]:
    if isinstance(ports, (str, bytes, int)):
        raise ValueError(f"allow_tcp {ports!r}: give a sequence of port numbers, e.g. (443,)")
    out = tuple(ports)
    for p in out:
        if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= 65535:
            raise ValueError(f"allow_tcp port {p!r}: give TCP port numbers 1-65535")
    return out


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


def _paths(what: str, values: Sequence[PathArg]) -> Tuple[str, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"{what} {values!r}: give a sequence of paths, e.g. ({values!r},)")
    return tuple(_existing(what, v) for v in values)


def _layers(values: Sequence[str]) -> Tuple[str, ...]:
    # Which names exist is the jail's to say (it refuses others with exit
    # 125 and the list): only the shape is checked here.
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
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
