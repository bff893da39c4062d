"""The report's ``enforced`` section, typed: what was in force while the
analysis ran (namespaces, identity, mounts, Landlock, seccomp, the cgroup
leaf, the promises)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

from ._fields import COMPUTED, _int, _is_obj, _made, _obj, _opt_str, _OverRaw, _Raw, _str, _strs

@dataclass(frozen=True)
class CgroupUsage:
    """What the run's cgroup leaf counted (``enforced.cgroup.usage``)."""

    peak_memory_bytes: int
    oom_kills: int
    memory_limit_hits: int
    pids_limit_hits: int
    cpu_usage_us: int
    cpu_user_us: int
    cpu_system_us: int
    cpu_nr_periods: int
    cpu_nr_throttled: int
    cpu_throttled_us: int

    @classmethod
    def from_json(cls, d: _Raw) -> "CgroupUsage":
        """From the report's ``enforced.cgroup.usage`` object."""
        return _made(cls, **{f: _int(d.get(f)) for f in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Mounts:
    """The analysis' filesystem view."""

    read_only: Tuple[str, ...]
    read_write: Tuple[str, ...]
    system: Tuple[str, ...]
    run_dir: str
    shm_bytes: int
    #: Each data dir of the profile (data/, docs/): its host path and its
    #: link in the run directory (./data), or why it is not there.
    data_dirs: Tuple[str, ...] = ()
    #: The view's own files over the host's (/etc/passwd, /etc/group).
    generated: Tuple[str, ...] = ()
    #: Where HOME, TMPDIR and the caches were, and what bounded them.
    scratch: str = ""
    #: What /proc/meminfo showed the analysis: the run's limit or the machine's.
    meminfo: str = ""

    @classmethod
    def from_json(cls, d: _Raw) -> "Mounts":
        """From the report's ``enforced.mounts`` object."""
        return _made(
            cls,
            read_only=_strs(d.get("read_only")),
            read_write=_strs(d.get("read_write")),
            system=_strs(d.get("system")),
            run_dir=_str(d.get("run_dir")),
            shm_bytes=_int(d.get("shm_bytes")),
            data_dirs=_strs(d.get("data_dirs")),
            generated=_strs(d.get("generated")),
            scratch=_str(d.get("scratch")),
            meminfo=_str(d.get("meminfo")),
        )


@dataclass(frozen=True)
class HostGroup:
    """A supplementary group of the caller that a rootless run keeps: its
    ``gid`` and ``name`` on the host ("" when the host names none), and the
    gid the analysis sees it as (``inside_gid``, the overflow gid)."""

    gid: int
    name: str
    inside_gid: int


@dataclass(frozen=True)
class Identity:
    """The groups the analysis holds besides its own gid (``enforced.identity``):
    ``host_ids``, where ``host_uid`` and ``host_gid`` came from (leased,
    fixed by the caller, or the caller's own); ``host_groups_kept`` (empty
    as root, which clears them); ``why``; and ``held_by``, the layers that
    keep what those groups could open out of reach."""

    host_ids: str
    host_groups_kept: Tuple[HostGroup, ...]
    why: str
    held_by: Tuple[str, ...]

    @classmethod
    def from_json(cls, d: Any) -> Optional["Identity"]:
        """The report's ``enforced.identity``, or None in a report without one."""
        if not _is_obj(d):
            return None
        kept = d.get("host_groups_kept") or ()
        return _made(
            cls,
            host_ids=_str(d.get("host_ids")),
            host_groups_kept=tuple(
                HostGroup(gid=_int(g.get("gid")), name=_str(g.get("name")), inside_gid=_int(g.get("inside_gid")))
                for g in kept if _is_obj(g)
            ),
            why=_str(d.get("why")),
            held_by=_strs(d.get("held_by")),
        )  # fmt: skip


@dataclass(frozen=True)
class Landlock:
    """The Landlock ruleset in force: the kernel's ``abi``, the ABI the
    policy needs in full, every rule line, and what this kernel did not
    enforce."""

    abi: int
    required: int
    rules: Tuple[str, ...]
    degraded: Tuple[str, ...]


@dataclass(frozen=True)
class Seccomp:
    """The seccomp filter in force: policy, arch, the program's sha256, what it denies."""

    policy: str
    arch: str
    sha256: str
    denied: Tuple[str, ...]


@dataclass(frozen=True)
class Cgroup:
    """The run's cgroup leaf: version (1 or 2), its paths, every file written with its value."""

    version: int
    paths: Tuple[str, ...]
    written: Mapping[str, str]
    usage: Optional[CgroupUsage]


@dataclass(frozen=True, eq=False)
class Enforced(_OverRaw):
    """What held the run: namespaces, identity, network, mounts, Landlock,
    seccomp, cgroup, and per promise of the contract the layers that held
    it. ``landlock``, ``seccomp`` and ``cgroup`` are None when switched off
    by name (or when the jail failed before the analysis started);
    ``identity`` is None and ``cpus`` "" in a report of a binary before
    them. It is also a mapping over ``raw`` (``enforced["net"]``)."""

    namespaces: Tuple[str, ...]
    host_uid: int
    host_gid: int
    uid: int
    no_new_privs: bool
    capabilities: str
    net: str
    allow_tcp: Tuple[int, ...]
    mounts: Mounts
    landlock: Optional[Landlock]
    seccomp: Optional[Seccomp]
    cgroup: Optional[Cgroup]
    promises: Mapping[str, Tuple[str, ...]]
    degraded: Tuple[str, ...]
    raw: _Raw = field(default_factory=dict, repr=False, metadata=COMPUTED)
    identity: Optional[Identity] = None
    #: The CPUs the analysis could run on, a kernel CPU list (``0-1``).
    cpus: str = ""

    @classmethod
    def from_json(cls, d: _Raw) -> "Enforced":
        """From the report's ``enforced`` object."""
        ll, sc, cg = d.get("landlock"), d.get("seccomp"), d.get("cgroup")
        usage = _obj(cg).get("usage") if _is_obj(cg) else None
        return _made(
            cls,
            namespaces=_strs(d.get("namespaces")),
            host_uid=_int(d.get("host_uid")),
            host_gid=_int(d.get("host_gid")),
            uid=_int(d.get("uid")),
            no_new_privs=d.get("no_new_privs") is True,
            capabilities=_str(d.get("capabilities")),
            net=_str(d.get("net")),
            allow_tcp=tuple(_int(p) for p in d.get("allow_tcp") or () if isinstance(p, int)),
            mounts=Mounts.from_json(_obj(d.get("mounts"))),
            landlock=_made(
                Landlock,
                abi=_int(ll.get("abi")), required=_int(ll.get("required")),
                rules=_strs(ll.get("rules")), degraded=_strs(ll.get("degraded")),
            ) if _is_obj(ll) else None,
            seccomp=_made(
                Seccomp,
                policy=_str(sc.get("policy")), arch=_str(sc.get("arch")),
                sha256=_str(sc.get("sha256")), denied=_strs(sc.get("denied")),
            ) if _is_obj(sc) else None,
            cgroup=_made(
                Cgroup,
                version=_int(cg.get("version")), paths=_strs(cg.get("paths")),
                written={k: v for k, v in _obj(cg.get("written")).items() if isinstance(v, str)},
                usage=CgroupUsage.from_json(usage) if _is_obj(usage) else None,
            ) if _is_obj(cg) else None,
            promises={k: _strs(v) for k, v in _obj(d.get("promises")).items()},
            degraded=_strs(d.get("degraded")),
            raw=d,
            identity=Identity.from_json(d.get("identity")),
            cpus=_str(d.get("cpus")),
        )  # fmt: skip
