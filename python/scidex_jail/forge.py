"""The platform's runtime interface, on the jail.

The platform runs analyses through ``run_python_script()``, which returns a
``RuntimeResult``; this module is a drop-in for it that runs the script in
scidex-jail instead of a bare ``subprocess.run``. It adds what the bare
call could not say: ``completion_notes`` (why a run was stopped: the
timeout, the memory limit, the PID limit), ``status``, the ``outputs``
with their sha256, and the whole ``report``. Pass the result to
:func:`scidex_jail.post_process.commit_outputs` to put the outputs in the
database::

    from scidex_jail.forge import run_python_script

    rr = run_python_script("/srv/analyses/a42/script.py", "a42",
                           timeout=600, collect="/srv/outputs/a42")
    rr = run_python_script(source="print(6 * 7)\n", analysis_id="a43")
    if rr.returncode != 0:
        log.warning("analysis a42: %s", rr.completion_notes)

A notebook: :func:`run_notebook` executes it with ``jupyter nbconvert
--execute`` under the ``notebook`` profile and returns the executed
notebook among the outputs.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple, Union, cast

from ._capture import BoundedCapture
from ._client import Jail
from ._limits import CountArg, CPUsArg, DurationArg, SizeArg
from ._options import PathArg, _check_id
from ._report import Output, Report
from ._result import Result
from ._server import Server
from ._streams import CAPTURE, Destination

#: The interpreter scripts run with: Debian's, whose libraries the jail's
#: system mounts show.
PYTHON = "/usr/bin/python3"
#: The notebook runner, from Debian's jupyter-nbconvert.
JUPYTER = "/usr/bin/jupyter"
#: How much of each captured stream forge keeps by default (``capture_limit``):
#: the head up to this, plus the last 4 KiB. Two streams of 1 MiB per run
#: keep ten runs at once within a few tens of MiB of the platform's memory.
DEFAULT_CAPTURE_LIMIT = 1 << 20

#: Environment the analyses get besides the caller's ``env`` (which wins).
#: Empty: the jail itself points HOME, TMPDIR and the usual caches into
#: the run's scratch (/home/analysis, never an output; docs/security.md,
#: "What the analysis sees"), so the outputs are what the analysis wrote.
#: Kept as a name for callers that merge it.
CACHE_ENV: Mapping[str, str] = {}

#: Also for notebooks: the kernel's debugger otherwise warns about
#: Debian's frozen modules on every start.
_NOTEBOOK_ENV: Mapping[str, str] = {**CACHE_ENV, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}

#: What the notebook run does inside the jail (argv: notebook, its name in
#: the run directory, then the nbconvert command): copy the notebook into the
#: run directory (nbconvert writes next to its input, and the input's
#: directory is read-only), then exec nbconvert on the copy. No shell.
_COPY_THEN_EXEC = (
    "import os, shutil, sys\n"
    "shutil.copyfile(sys.argv[1], sys.argv[2])\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


@dataclass(frozen=True)
class RuntimeResult:
    """What a run gave, in the platform runtime's terms.

    ``returncode``: the analysis' exit code; after a signal (including the
    jail's SIGKILL at a timeout or an OOM kill) 128+n, not subprocess' -n;
    ``stdout``/``stderr``: the captured text ("" when streamed elsewhere);
    ``duration``: seconds the call took, jail setup included;
    ``completion_notes``: one sentence saying how the run ended and, when
    it was stopped, which limit stopped it; ``status``: the jail's reason
    (``ok``, ``timeout``, ``oom_killed``, ...); ``outputs``: files the
    analysis left; ``report``: the jail's whole :class:`scidex_jail.Report`
    (the JSON in ``report.raw``); ``result``: the
    :class:`scidex_jail.Result` it came from.

    When forge captured a stream (the default, bounded by
    ``capture_limit``): ``stdout_bytes`` is how many bytes reached this
    process, ``stdout_dropped`` how many of them were kept in neither the
    head nor the tail (``stdout`` then says so in a line where they were),
    ``stdout_tail`` the last 4 KiB as text; the same for stderr. ``None``
    when the stream went elsewhere or was captured without a bound. What
    the jail itself cut (its per-stream budget) is in the report's
    ``streams``.
    """

    returncode: int
    stdout: str
    stderr: str
    duration: float
    completion_notes: str
    status: str
    outputs: Tuple[Output, ...]
    report: Report = field(repr=False)
    analysis_id: str = ""
    collected_to: Optional[str] = None
    result: Optional[Result] = field(default=None, repr=False)
    stdout_bytes: Optional[int] = None
    stdout_dropped: Optional[int] = None
    stdout_tail: Optional[str] = field(default=None, repr=False)
    stderr_bytes: Optional[int] = None
    stderr_dropped: Optional[int] = None
    stderr_tail: Optional[str] = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """True when the analysis exited 0."""
        return self.status == "ok"

    @property
    def truncated(self) -> bool:
        """True when forge dropped part of stdout or stderr (``capture_limit``)."""
        return bool(self.stdout_dropped or self.stderr_dropped)

    def output(self, path: str) -> Optional[Output]:
        """The output at ``path`` (relative to the run directory), if any."""
        for o in self.outputs:
            if o.path == path:
                return o
        return None

    @classmethod
    def from_result(
        cls,
        r: Result,
        duration: float,
        out: Optional[BoundedCapture] = None,
        err: Optional[BoundedCapture] = None,
    ) -> "RuntimeResult":
        """Map a :class:`scidex_jail.Result` to the runtime's fields; ``out``
        and ``err`` are forge's bounded captures, when it made them."""
        return cls(
            returncode=r.exit_code,
            stdout=out.text() if out is not None else r.stdout or "",
            stderr=err.text() if err is not None else r.stderr or "",
            duration=duration,
            completion_notes=r.completion_notes,
            status=r.status,
            outputs=r.outputs,
            report=r.report,
            analysis_id=r.analysis_id,
            collected_to=r.collected_to,
            result=r,
            stdout_bytes=out.total if out is not None else None,
            stdout_dropped=out.dropped if out is not None else None,
            stdout_tail=out.tail() if out is not None else None,
            stderr_bytes=err.total if err is not None else None,
            stderr_dropped=err.dropped if err is not None else None,
            stderr_tail=err.tail() if err is not None else None,
        )


def _bounded(dest: Destination, limit: Optional[int]) -> Tuple[Destination, Optional[BoundedCapture]]:
    """CAPTURE becomes a :class:`BoundedCapture` of ``limit`` bytes (the
    runner pumps the pipe into it); any other destination, or no limit,
    is passed on as it is."""
    if limit is None or isinstance(dest, bool) or dest != CAPTURE:
        return dest, None
    cap = BoundedCapture(limit)
    return cast(Destination, cap), cap


def _client(jail: Optional[Jail], binary: Optional[PathArg], tmp_root: Optional[PathArg]) -> Jail:
    """The client a forge call runs with: ``jail``, or one made from
    ``binary`` and ``tmp_root``, never a mix."""
    if jail is None:
        return Jail(binary=binary, tmp_root=tmp_root)
    if not isinstance(jail, Jail):
        raise ValueError(f"jail {jail!r}: give a scidex_jail.Jail")
    if binary is not None or tmp_root is not None:
        raise ValueError("give jail= or binary=/tmp_root=, not both: the client holds its binary and tmp_root")
    return jail


def _runner(
    jail: Optional[Jail], binary: Optional[PathArg], tmp_root: Optional[PathArg], server: Optional[Server]
) -> Callable[..., Result]:
    """What a forge call runs with: ``server.run`` (with ``tmp_root`` for
    each run), or the ``run`` of :func:`_client`'s client."""
    if server is None:
        return _client(jail, binary, tmp_root).run
    if not isinstance(server, Server):
        raise ValueError(f"server {server!r}: give a scidex_jail.Server")
    if jail is not None or binary is not None:
        raise ValueError("give server= or jail=/binary=, not both: the server runs its own binary and settings")
    if tmp_root is not None:
        return functools.partial(server.run, tmp_root=tmp_root)
    return server.run


def _check_readable_by_analysis(path: str) -> None:
    """When this process is root the analysis runs as an unprivileged uid:
    every directory on the way to ``path`` must be searchable by others and
    the file readable, or the script cannot be opened inside."""
    if os.geteuid() != 0:
        return
    st = os.stat(path)
    if not st.st_mode & stat.S_IROTH:
        raise ValueError(f"{path} is not readable by other users (the analysis runs as one): chmod o+r it")
    d = os.path.dirname(path)
    while True:
        if not os.stat(d).st_mode & stat.S_IXOTH:
            raise ValueError(
                f"directory {d} is not searchable by other users, so the analysis cannot reach {path}: "
                "chmod o+x it or keep scripts elsewhere"
            )
        parent = os.path.dirname(d)
        if parent == d:
            return
        d = parent


def _shared_tmp() -> str:
    """Where source text is written: the temporary directory when the
    analysis' uid can reach it (every directory on the way searchable by
    others), else /tmp."""
    d = tempfile.gettempdir()
    try:
        _check_readable_by_analysis(os.path.join(d, "."))
    except (ValueError, OSError):
        return "/tmp"
    return d


def _script_path(script: PathArg) -> str:
    """The absolute path of an existing script file. Never source text: that
    comes by keyword (``source=``)."""
    try:
        p = os.fspath(script)
    except TypeError:
        raise ValueError(f"script {script!r}: give a path (str or os.PathLike); source text goes in source=") from None
    if not isinstance(p, str) or not p or "\0" in p:
        raise ValueError(f"script {script!r}: give a path; source text goes in source=")
    if "\n" in p:
        raise ValueError(f"script {p[:40]!r}...: a path has no newline; pass source text as source=")
    p = os.path.abspath(p)
    if not os.path.isfile(p):
        raise ValueError(f"script {p!r} looks like a path but no such file exists (source text goes in source=)")
    return p


def run_python_script(
    script: Optional[PathArg] = None,
    analysis_id: str = "",
    *,
    source: Optional[str] = None,
    args: Sequence[str] = (),
    profile: str = "default",
    timeout: Optional[DurationArg] = None,
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
    stdout: Destination = CAPTURE,
    stderr: Destination = CAPTURE,
    capture_limit: Optional[int] = DEFAULT_CAPTURE_LIMIT,
    python: str = PYTHON,
    binary: Optional[PathArg] = None,
    tmp_root: Optional[PathArg] = None,
    jail: Optional[Jail] = None,
    server: Optional[Server] = None,
) -> RuntimeResult:
    """Run a Python script as analysis ``analysis_id`` and return a :class:`RuntimeResult`.

    Give exactly one of ``script``, the path of an existing file (str or
    ``pathlib.Path``; the file alone is bound read-only at the same path
    inside, so pass its directory in ``ro`` if it imports siblings), and
    ``source=``, the script's text (written to a private temporary file,
    0644 in a 0755 directory, bound read-only and removed afterwards)::

        run_python_script("/srv/analyses/a42/analysis.py", "a42")
        run_python_script(source="print(6 * 7)\n", analysis_id="a43")

    A str is never guessed to be one or the other. It runs as
    ``python script args...`` in the run directory (its cwd) with the
    profile's limits; ``timeout`` etc. override them. The other arguments
    are those of :func:`scidex_jail.run`; ``jail``, a :class:`scidex_jail.Jail`,
    runs it with that client's settings (then leave ``binary`` and
    ``tmp_root`` out); ``server``, a :class:`scidex_jail.Server`, runs it
    through that resident server (then leave ``jail`` and ``binary``
    out; ``tmp_root`` still applies). stdout/stderr are captured by default, each
    bounded by ``capture_limit`` bytes (1 MiB; the last 4 KiB are kept
    besides, and the rest counted: see :class:`RuntimeResult`; ``None``
    keeps everything); stream long logs to a file or callback instead.

    Raises ValueError (bad arguments, an unreadable script),
    JailNotFoundError and JailSetupError like :func:`scidex_jail.run`;
    every way the script itself ends is a RuntimeResult.
    """
    _check_id(analysis_id)
    if (script is None) == (source is None):
        raise ValueError("give the script's path or, as source=, its text: exactly one of them")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise ValueError(f"source {source!r}: give the script's text, a non-empty str")
    stdout, out = _bounded(stdout, capture_limit)
    stderr, err = _bounded(stderr, capture_limit)
    run = _runner(jail, binary, tmp_root, server)
    path = _script_path(script) if script is not None else None
    tmpdir: Optional[str] = None
    try:
        if source is not None:
            tmpdir = tempfile.mkdtemp(prefix=f"scidex-script-{analysis_id[:32]}-", dir=_shared_tmp())
            os.chmod(tmpdir, 0o755)
            path = os.path.join(tmpdir, "script.py")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(source)
            os.chmod(path, 0o644)
        assert path is not None
        _check_readable_by_analysis(path)
        if isinstance(args, str) or any(not isinstance(a, str) for a in args):
            raise ValueError(f"args {args!r}: give a sequence of strings")
        start = time.monotonic()
        r = run(
            [python, path, *args],
            analysis_id=analysis_id, profile=profile, timeout=timeout, memory=memory, cpus=cpus,
            pids=pids, disk=disk, net=net, allow_tcp=allow_tcp, root=root, ro=(path, *ro), rw=rw,
            inputs=inputs, env={**CACHE_ENV, **(env or {})}, collect=collect, keep=keep,
            stdout=stdout, stderr=stderr,
        )  # fmt: skip
        return RuntimeResult.from_result(r, time.monotonic() - start, out, err)
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


def run_notebook(
    notebook: PathArg,
    analysis_id: str,
    *,
    profile: str = "notebook",
    timeout: Optional[DurationArg] = None,
    memory: Optional[SizeArg] = None,
    cpus: Optional[CPUsArg] = None,
    pids: Optional[CountArg] = None,
    disk: Optional[SizeArg] = None,
    root: Optional[PathArg] = None,
    ro: Sequence[PathArg] = (),
    inputs: Sequence[PathArg] = (),
    env: Optional[Mapping[str, str]] = None,
    collect: Optional[PathArg] = None,
    keep: bool = False,
    kernel: Optional[str] = None,
    stdout: Destination = CAPTURE,
    stderr: Destination = CAPTURE,
    capture_limit: Optional[int] = DEFAULT_CAPTURE_LIMIT,
    python: str = PYTHON,
    jupyter: str = JUPYTER,
    binary: Optional[PathArg] = None,
    tmp_root: Optional[PathArg] = None,
    jail: Optional[Jail] = None,
    server: Optional[Server] = None,
) -> RuntimeResult:
    """Execute a Jupyter notebook as analysis ``analysis_id`` and return a :class:`RuntimeResult`.

    The notebook is bound read-only, copied into the run directory under
    its own name and executed there in place with ``jupyter nbconvert --to
    notebook --execute --inplace`` under the ``notebook`` profile (its
    kernel talks to nbconvert over the run's private loopback; no other
    network). The executed notebook, outputs and all, is among
    ``outputs`` under the notebook's file name (collected with
    ``collect``), as are files its cells wrote. A cell that raises fails
    the run (``status`` ``exit_nonzero``; nbconvert's traceback is in
    ``stderr``). ``kernel`` picks a kernel other than the notebook's own;
    ``jail`` a :class:`scidex_jail.Jail` to run it with, ``server`` a
    :class:`scidex_jail.Server` to run it through.
    """
    stdout, out = _bounded(stdout, capture_limit)
    stderr, err = _bounded(stderr, capture_limit)
    run = _runner(jail, binary, tmp_root, server)
    p = os.path.abspath(os.fspath(notebook))
    if not os.path.isfile(p):
        raise ValueError(f"notebook {p} does not exist or is not a file")
    name = os.path.basename(p)
    if not name.endswith(".ipynb") or name.startswith("-"):
        raise ValueError(f"notebook {p}: give a .ipynb file whose name does not start with '-'")
    _check_readable_by_analysis(p)
    cmd = [python, "-c", _COPY_THEN_EXEC, p, name, jupyter, "nbconvert", "--to", "notebook", "--execute", "--inplace"]
    if kernel is not None:
        if not kernel or not all(c.isalnum() or c in "._-" for c in kernel):
            raise ValueError(f"kernel {kernel!r}: give a kernel name such as 'python3'")
        cmd.append(f"--ExecutePreprocessor.kernel_name={kernel}")
    cmd.append(name)
    start = time.monotonic()
    r = run(
        cmd,
        analysis_id=analysis_id, profile=profile, timeout=timeout, memory=memory, cpus=cpus, pids=pids,
        disk=disk, root=root, ro=(p, *ro), inputs=inputs, env={**_NOTEBOOK_ENV, **(env or {})},
        collect=collect, keep=keep, stdout=stdout, stderr=stderr,
    )  # fmt: skip
    return RuntimeResult.from_result(r, time.monotonic() - start, out, err)
