"""Fixtures for the scidex_jail tests: the real binary, world-readable work
directories (the analysis runs as an unprivileged host uid), a throw-away
PostgreSQL 15 cluster, checks that a run left nothing behind, and every
report a test gets validated against the report's JSON Schema.

Run as root with a built jail: ``make test-python`` (or
``SCIDEX_JAIL_BIN=$PWD/bin/scidex-jail /usr/bin/python3 -m pytest python/tests``).
Tests marked ``unit`` need neither root, nor the binary, nor PostgreSQL:
``make unit`` runs them alone, as an unprivileged user (``-m unit``).
Nothing here skips: a missing prerequisite fails with what to install.

The ``jail`` fixture runs a test twice: through the module functions (one
``scidex-jail run`` per analysis, id ``[run]``) and through one resident
``scidex-jail serve`` shared by the session (``scidex_jail.Server``, id
``[server]``; docs/serve.md): both have ``.run``, ``.start`` and
``.run_async`` with the same options and results.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional, Sequence, Union

import pytest

if TYPE_CHECKING:
    import scidex_jail

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3"

_ids = itertools.count()


@pytest.fixture(autouse=True)
def _prerequisites(request: pytest.FixtureRequest) -> None:
    """Every test but a ``unit`` one runs as root with the real binary."""
    if request.node.get_closest_marker("unit") is None:
        request.getfixturevalue("jail_bin")


@pytest.fixture(autouse=True)
def _validated_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every report the package reads during a test is checked against the
    report's JSON Schema (jsonschema, Debian's python3-jsonschema) first."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        pytest.fail("jsonschema is missing: install Debian's python3-jsonschema (.ci/deps test does)")
    from scidex_jail import _prepared, validate_report

    read = _prepared.read_report

    def read_and_validate(path: str) -> Optional[dict[str, Any]]:
        data = read(path)
        if data is not None:
            validate_report(data)
        return data

    monkeypatch.setattr(_prepared, "read_report", read_and_validate)


@pytest.fixture(scope="session")
def jail_bin() -> str:
    """The binary under test: $SCIDEX_JAIL_BIN, else the checkout's bin/scidex-jail."""
    if os.geteuid() != 0:
        pytest.fail("these tests run the jail as root (each analysis then gets a host uid of its own): run them as root")
    path = os.environ.get("SCIDEX_JAIL_BIN") or os.path.join(REPO, "bin", "scidex-jail")
    if not os.path.isfile(path):
        pytest.fail(f"no scidex-jail binary at {path}: run `make build` (or `make test-python`, which builds it)")
    os.environ["SCIDEX_JAIL_BIN"] = os.path.abspath(path)
    return os.environ["SCIDEX_JAIL_BIN"]


# --- run and server: the two ways a test's analyses run -----------------


@pytest.fixture(scope="session")
def jail_server(jail_bin: str) -> Iterator["scidex_jail.Server"]:
    """One ``scidex-jail serve`` (a child, slots on their defaults) for the
    whole session, reports validated. At the end it is closed, and must
    have exited 0 and removed every slot it prepared (their leaves, their
    inits): nothing of it is left."""
    import scidex_jail

    with scidex_jail.Server(validate=True) as server:
        assert server.pid is not None
        pid = server.pid
        yield server
        # Its slots now: the leaves holding processes the server started.
        slots = _leaves_holding(lambda p: _ppid(p) == pid)
    proc = server._proc
    assert proc is not None and proc.returncode == 0, f"scidex-jail serve ended with {proc and proc.returncode}"
    # Those, and any leaf of a slot of this server (scidex-slot-<its pid>-*:
    # also one a run took, and left behind empty), must be gone.
    for d in _own_cgroup_dirs():
        try:
            slots += [os.path.join(d, n) for n in os.listdir(d) if n.startswith(f"scidex-slot-{pid}-")]
        except OSError:
            pass
    left = sorted({p for p in slots if os.path.exists(p)})
    assert left == [], f"scidex-jail serve left cgroup leaves of its slots: {left}"


#: What the ``jail`` fixture gives, used alike: the ``scidex_jail`` module
#: or a ``scidex_jail.Server`` (``.run``, ``.start``, ``.run_async``).
Jailish = Union[ModuleType, "scidex_jail.Server"]


@pytest.fixture(params=["run", "server"])
def jail(request: pytest.FixtureRequest) -> Jailish:
    """How the test runs its analyses: ``scidex_jail`` itself (``run``: a
    ``scidex-jail run`` per analysis) or the session's ``Server``
    (``server``). Either has ``.run``, ``.start`` and ``.run_async``."""
    if request.param == "server":
        server: Jailish = request.getfixturevalue("jail_server")
        return server
    import scidex_jail

    return scidex_jail


def served(jail: Jailish) -> bool:
    """Whether ``jail`` is a Server: its runs' cleanup may follow their
    replies (``leftovers(..., served=...)``)."""
    return not isinstance(jail, ModuleType)


def through(jail: Jailish) -> Dict[str, Any]:
    """The keywords that make a forge call run as ``jail`` does:
    ``server=`` for a Server, none for the module."""
    import scidex_jail

    return {"server": jail} if isinstance(jail, scidex_jail.Server) else {}


def new_id(tag: str) -> str:
    """A fresh analysis ID for one run: unique per process and call."""
    return f"py-{tag}-{os.getpid()}-{next(_ids)}"


@pytest.fixture
def work() -> Iterator[str]:
    """A directory the analysis' uid can read (0755; files made 0644 by write())."""
    d = tempfile.mkdtemp(prefix="sj-py-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def write(directory: str, name: str, text: str) -> str:
    """Write a world-readable file and return its path."""
    p = os.path.join(directory, name)
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(p, 0o644)
    return p


# --- what a run must leave behind: nothing ---------------------------------


def _own_cgroup_dirs() -> list[str]:
    """The cgroup directories this process is in, one per hierarchy
    (v1 controllers and the v2 tree), where the jail makes its leaves."""
    out = []
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            names = ctrls.split(",") if ctrls else ["unified"]
            for c in names:
                c = c.replace("name=", "")
                base = os.path.join("/sys/fs/cgroup", c)
                if os.path.isdir(base):
                    out.append(os.path.join(base, path.lstrip("/")))
    return out


def _ppid(pid: int) -> Optional[int]:
    """The parent of process ``pid``, None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _leaves_holding(pred: Callable[[int], bool]) -> list[str]:
    """The ``scidex-*`` cgroup leaves below this process' cgroups with a
    process ``pid`` in them for which ``pred(pid)``."""
    found = []
    for d in _own_cgroup_dirs():
        try:
            names = [n for n in os.listdir(d) if n.startswith("scidex-")]
        except OSError:
            continue
        for n in names:
            try:
                with open(os.path.join(d, n, "cgroup.procs")) as f:
                    pids = [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                continue
            if any(pred(p) for p in pids):
                found.append(os.path.join(d, n))
    return found


def leftovers(analysis_id: str, report: Optional[dict[str, Any]] = None, tmp_root: str = "/tmp", served: bool = False) -> list[str]:
    """Everything of run ``analysis_id`` still on the host: processes whose
    command line names it, cgroup leaves (the report's, any
    ``scidex-<id>-*`` below this process' cgroups, and any ``scidex-*``
    leaf there holding one of those processes: a run through the server
    may be in a slot's leaf, ``scidex-slot-*``), the run directory.

    A served run whose report says ``"cleanup": "after_reply"`` (or, with
    no report at hand, ``served``) had its reply before its cleanup: what is
    left is looked for again until it is gone, for at most 20 s (the
    cleanup's bound, not a timing)."""
    found = _leftovers_now(analysis_id, report, tmp_root)
    if served or (report or {}).get("cleanup") == "after_reply":
        deadline = time.monotonic() + 20
        while found and time.monotonic() < deadline:
            time.sleep(0.02)
            found = _leftovers_now(analysis_id, report, tmp_root)
    return found


def _leftovers_now(analysis_id: str, report: Optional[dict[str, Any]], tmp_root: str) -> list[str]:
    found = []
    named: set[int] = set()
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if any(analysis_id.encode() in a for a in args):
            named.add(int(pid))
            found.append(f"process {pid}: {b' '.join(args).decode(errors='replace')[:200]}")
    enforced = (report or {}).get("enforced") or {}
    paths = list((enforced.get("cgroup") or {}).get("paths") or [])
    for d in _own_cgroup_dirs():
        try:
            paths += [os.path.join(d, n) for n in os.listdir(d) if n.startswith(f"scidex-{analysis_id}-")]
        except OSError:
            pass
    if named:
        paths += _leaves_holding(named.__contains__)
    found += [f"cgroup {p}" for p in dict.fromkeys(paths) if os.path.exists(p)]
    run_dir = (report or {}).get("run_dir") or os.path.join(tmp_root, f"scidex-analysis-{analysis_id}")
    if os.path.lexists(run_dir):
        found.append(f"run directory {run_dir}")
    return found


# --- PostgreSQL 15, a cluster of our own ------------------------------------

PG_BIN = "/usr/lib/postgresql/15/bin"
#: Where a platform's server puts its socket; hidden inside the jail.
PG_SYSTEM_SOCKDIR = "/var/run/postgresql"


@dataclass(frozen=True)
class Postgres:
    port: int
    sockdirs: Sequence[str]  # every directory with a .s.PGSQL.<port> socket

    @property
    def sockets(self) -> list[str]:
        return [os.path.join(d, f".s.PGSQL.{self.port}") for d in self.sockdirs]

    def conninfo(self, dbname: str = "postgres", tcp: bool = False) -> str:
        host = "127.0.0.1" if tcp else self.sockdirs[-1]
        return f"host={host} port={self.port} user=postgres dbname={dbname} connect_timeout=10"


def _free_port() -> int:
    """A port of 127.0.0.1 nothing listens on, never the platform's 5432
    (a host's own cluster stays where it is, running), with no socket of
    that number in the system socket directory."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port != 5432 and not os.path.lexists(os.path.join(PG_SYSTEM_SOCKDIR, f".s.PGSQL.{port}")):
            return port


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A throw-away PostgreSQL 15 on a free port of 127.0.0.1 and two unix
    sockets (/var/run/postgresql, where a platform's would be, and a private
    directory), trust auth, stopped and removed at the end. A cluster the
    host runs itself (Debian's on 5432) is left running."""
    if not os.path.exists(os.path.join(PG_BIN, "initdb")):
        pytest.fail(f"no {PG_BIN}/initdb: install Debian's postgresql package (.ci/deps test does)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.fail("psycopg 3 is missing: install Debian's python3-psycopg (.ci/deps test does)")
    import pwd

    pg = pwd.getpwnam("postgres")
    base = tempfile.mkdtemp(prefix="sj-pypg-")
    os.chmod(base, 0o755)
    sockdir = os.path.join(base, "sock")
    os.mkdir(sockdir)
    os.makedirs(PG_SYSTEM_SOCKDIR, mode=0o2775, exist_ok=True)
    for d in (base, sockdir, PG_SYSTEM_SOCKDIR):
        os.chown(d, pg.pw_uid, pg.pw_gid)
    data, log = os.path.join(base, "data"), os.path.join(base, "server.log")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}

    def as_postgres(*args: str) -> None:
        p = subprocess.run(
            list(args), user=pg.pw_uid, group=pg.pw_gid, extra_groups=[], env=env, cwd=base,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
        )  # fmt: skip
        if p.returncode != 0:
            extra = open(log).read() if os.path.exists(log) else ""
            raise RuntimeError(f"{args}: exit {p.returncode}\n{p.stdout.decode()}\n{extra}")

    as_postgres(f"{PG_BIN}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")
    # A free port can be taken between the probe and the server's bind
    # (other suites start servers too): a failed start tries another.
    for attempt in range(3):
        port = _free_port()
        opts = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c fsync=off "
            f"-c unix_socket_directories={PG_SYSTEM_SOCKDIR},{sockdir}"
        )
        try:
            as_postgres(f"{PG_BIN}/pg_ctl", "-D", data, "-l", log, "-o", opts, "-w", "-t", "60", "start")
            break
        except RuntimeError:
            if attempt == 2:
                raise
    try:
        yield Postgres(port, (PG_SYSTEM_SOCKDIR, sockdir))
    finally:
        as_postgres(f"{PG_BIN}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def db(postgres: Postgres) -> Iterator[Callable[[], Any]]:
    """A fresh database for one test; calling the fixture's value opens a
    new psycopg connection to it (closed at the end)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres.conninfo(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    conns: list[Any] = []

    def connect() -> Any:
        c = psycopg.connect(postgres.conninfo(name))
        conns.append(c)
        return c

    try:
        yield connect
    finally:
        for c in conns:
            c.close()
        with psycopg.connect(postgres.conninfo(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def wait_for(pred: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll until pred() is true; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)
