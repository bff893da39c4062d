"""The client: :class:`Jail` holds what every run of one deployment shares
(the binary, the profiles file, where run directories go, the delegated
cgroup) and runs analyses with the per-run options. The module functions
:func:`run`, :func:`start` and :func:`run_async` are a default client made
per call from their ``binary``, ``config``, ``tmp_root`` and
``cgroup_parent`` arguments."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Optional, Sequence, Tuple, cast

from ._async import run_prepared
from ._options import JailOptions, PathArg, SpecOptions, _absolute, build_spec, check_keywords
from ._prepared import Prepared, StdinArg
from ._result import Result
from ._run import Run, wait_or_abort
from ._streams import Destination

if TYPE_CHECKING:
    # typing.Unpack is Python 3.11's; the package supports 3.9 (mypy checks
    # for it), where the annotation is only ever read by type checkers.
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack


class RunOptions(SpecOptions, total=False):
    """The per-run options of :meth:`Jail.run`, :meth:`Jail.start` and
    :meth:`Jail.run_async`, each optional, as ``**options``: the options of
    the run's spec and where its streams go. Documented once, in
    :meth:`Jail.run`. Build a mapping of them once and pass it to several
    runs: ``jail.run(argv, analysis_id="a1", **opts)``."""

    stdin: StdinArg
    stdout: Destination
    stderr: Destination


class JailRunOptions(RunOptions, JailOptions, total=False):
    """The options of the module functions :func:`run`, :func:`start` and
    :func:`run_async`: a run's and its :class:`Jail`'s."""


#: The names of the options, for the check of ``**options`` at run time.
RUN_KEYWORDS = frozenset(RunOptions.__annotations__)
JAIL_KEYWORDS = frozenset(JailOptions.__annotations__)


class Jail:
    """A client of one scidex-jail installation.

    ``binary``: the jail (default ``$SCIDEX_JAIL_BIN``, then ``scidex-jail``
    on PATH, then ``/usr/bin/scidex-jail``, looked up at each run);
    ``config``: a profiles file; ``tmp_root``: where run directories are
    made; ``cgroup_parent``: the delegated cgroup for the runs' leaves
    (default: the jail's own); ``unsafe_disable``: layers switched off by
    name for every run (``("cgroup",)`` for a rootless caller on a host
    that delegates it no cgroup: the report lists the layer as degraded).
    ``validate``: check every report against the
    report's JSON Schema before reading it (needs the ``jsonschema``
    library; a mismatch raises :class:`ReportSchemaError`)::

        jail = scidex_jail.Jail(binary="/usr/bin/scidex-jail", tmp_root="/srv/runs",
                                cgroup_parent="/sys/fs/cgroup/scidex.slice/runner")
        r = jail.run(["/usr/bin/python3", "a.py"], analysis_id="a42", ro=["a.py"], timeout=600)

    The paths are checked when the client is made (text; all but the
    binary made absolute) and again, for existence, at each run. A client holds no process or
    file: share one between threads and tasks freely.
    """

    def __init__(
        self,
        binary: Optional[PathArg] = None,
        config: Optional[PathArg] = None,
        tmp_root: Optional[PathArg] = None,
        cgroup_parent: Optional[PathArg] = None,
        *,
        unsafe_disable: Sequence[str] = (),
        validate: bool = False,
    ) -> None:
        if binary is not None and not isinstance(binary, (str, os.PathLike)):
            raise ValueError(f"binary {binary!r}: give a path (str or os.PathLike)")
        self.binary = os.fspath(binary) if binary is not None else None
        self.config = _absolute("config", config) if config is not None else None
        self.tmp_root = _absolute("tmp_root", tmp_root) if tmp_root is not None else None
        self.cgroup_parent = _absolute("cgroup_parent", cgroup_parent) if cgroup_parent is not None else None
        self.unsafe_disable = tuple(unsafe_disable)
        if not isinstance(validate, bool):
            raise ValueError(f"validate {validate!r}: give True or False")
        self.validate = validate

    def __repr__(self) -> str:
        return (
            f"Jail(binary={self.binary!r}, config={self.config!r}, tmp_root={self.tmp_root!r}, "
            f"cgroup_parent={self.cgroup_parent!r}, unsafe_disable={self.unsafe_disable!r}, "
            f"validate={self.validate!r})"
        )

    def _prepare(
        self, argv: Sequence[str], analysis_id: str, options: RunOptions, *, report_file: bool = True
    ) -> Prepared:
        check_keywords(options, RUN_KEYWORDS, self.binary)
        spec_options = cast(SpecOptions, {k: v for k, v in options.items() if k not in ("stdin", "stdout", "stderr")})
        spec = build_spec(
            argv, analysis_id=analysis_id, config=self.config, tmp_root=self.tmp_root,
            cgroup_parent=self.cgroup_parent, unsafe_disable=self.unsafe_disable, binary=self.binary,
            **spec_options,
        )  # fmt: skip
        return Prepared(
            spec, options.get("stdin"), options.get("stdout"), options.get("stderr"),
            validate=self.validate, report_file=report_file,
        )  # fmt: skip

    def start(self, argv: Sequence[str], *, analysis_id: str, **options: Unpack[RunOptions]) -> Run:
        """Start ``argv`` as an analysis in the jail and return its :class:`Run`.

        Takes the arguments of :meth:`run`; returns as soon as the jail is
        started. Raises ValueError for a bad argument and JailNotFoundError
        for a missing binary, before anything is started.
        """
        return Run(self._prepare(argv, analysis_id, options))

    def run(self, argv: Sequence[str], *, analysis_id: str, **options: Unpack[RunOptions]) -> Result:
        """Run ``argv`` as an analysis in the jail and return its :class:`Result`.

        ``argv`` is the command, a list (no shell, ever); the analysis runs in
        its own fresh directory ``<tmp_root>/scidex-analysis-<analysis_id>/``,
        which is its cwd (its HOME, TMPDIR and caches are in a scratch that is
        never an output), with nothing of this process' environment but
        ``env``. Arguments left as None come from the profile
        (``profile``, default ``"default"``):

        - ``timeout``: wall-clock budget, seconds / timedelta / ``"90s"``
          (0 = none); ``grace``: time between SIGTERM and SIGKILL;
        - ``memory``, ``disk``: bytes or ``"512M"``/``"2G"``; ``cpus``: CPU
          quota (0.5, 2); ``pids``: processes and threads; ``"none"``
          switches a limit off; what 0 means and the bounds are the jail's
          (``scidex-jail profiles --schema``): a value it refuses raises
          :class:`LimitError` with its message (``cpus=0`` as ``--cpus 0``);
          every other limit of that schema is a keyword by its name too
          (``swap="1G"``, ``shm="64M"``), passed as its flag;
        - ``net``: one of the jail's network modes, as ``scidex-jail
          profiles --schema`` lists them (``"none"`` by default); ``allow_tcp``:
          outbound ports for a mode that takes them (``net="host"``; never
          PostgreSQL's); ``allow_hosts``: with ``net="egress"``, the hosts the
          analysis may reach by name (``"eutils.ncbi.nlm.nih.gov"``,
          ``"*.uniprot.org"``, ``"files.rcsb.org:80"``; port 443 unless given),
          ``allow_ranges``: CIDR ranges such a host may resolve into although
          not public; every decision is in ``Report.egress``;
        - ``root``: the platform checkout whose ``data/`` and ``docs/`` are
          readable (default: the current directory); ``ro``, ``inputs``:
          host paths readable at the same path inside; ``rw``: writable ones;
        - ``collect``: copy the run directory's regular files here before it is
          removed (``Result.outputs[i].collected_path``); ``keep``: keep it;
        - ``stdin``: None (``/dev/null``), bytes/str, a file object;
          ``stdout``/``stderr``: a :data:`Destination`: None (inherit stdout;
          pass stderr through), CAPTURE (``Result.stdout``/``stderr``), DEVNULL,
          a path or a file object to stream into, or a callable called with each
          line; only CAPTURE keeps output in memory;
        - ``output_budget``: the jail's budgets of the work on what the
          analysis leaves, e.g. ``{"entries": 10000, "bytes": "1G",
          "file_bytes": "none", "time": "3m"}`` (left out: the profile's;
          over one the status is ``output_limit``).

        Every ending of the analysis (exit codes, signals, timeout, OOM, PID
        limit, cancel) is a :class:`Result`; check ``status``. Raises
        TypeError for a keyword that is no option (the message lists them;
        the options' types are :class:`RunOptions`), ValueError for bad
        arguments and JailNotFoundError for a missing
        binary (before anything starts), JailSetupError when the jail could
        not start the analysis (exit 125), JailError when it wrote no report.
        On KeyboardInterrupt (or any exception while waiting) the run is
        cancelled and waited for, then the exception propagates.
        """
        return wait_or_abort(self.start(argv, analysis_id=analysis_id, **options))

    async def run_async(self, argv: Sequence[str], *, analysis_id: str, **options: Unpack[RunOptions]) -> Result:
        """:meth:`run` for asyncio: the same arguments and result.

        Output callbacks are called from the event loop. Cancelling the task
        that awaits it cancels the run: SIGTERM to the jail, then the task
        waits (shielded from further cancellation) until the jail has exited
        and cleaned up, and re-raises :class:`asyncio.CancelledError`.
        """
        return await run_prepared(self._prepare(argv, analysis_id, options))


def _split(options: JailRunOptions) -> Tuple[Jail, RunOptions]:
    """The client the module functions' jail options make, and the run's
    options, after refusing a keyword that is neither."""
    check_keywords(options, RUN_KEYWORDS | JAIL_KEYWORDS, options.get("binary"))
    jail_options = cast(JailOptions, {k: v for k, v in options.items() if k in JAIL_KEYWORDS})
    run_options = cast(RunOptions, {k: v for k, v in options.items() if k not in JAIL_KEYWORDS})
    return Jail(**jail_options), run_options


def start(argv: Sequence[str], *, analysis_id: str, **options: Unpack[JailRunOptions]) -> Run:
    """:meth:`Jail.start` of ``Jail(binary, config, tmp_root, cgroup_parent, unsafe_disable=...)``."""
    jail, run_options = _split(options)
    return jail.start(argv, analysis_id=analysis_id, **run_options)


def run(argv: Sequence[str], *, analysis_id: str, **options: Unpack[JailRunOptions]) -> Result:
    """:meth:`Jail.run` of ``Jail(binary, config, tmp_root, cgroup_parent, unsafe_disable=...)``:
    run ``argv`` as an analysis and return its :class:`Result` (see
    :meth:`Jail.run` for every argument)."""
    jail, run_options = _split(options)
    return jail.run(argv, analysis_id=analysis_id, **run_options)


async def run_async(argv: Sequence[str], *, analysis_id: str, **options: Unpack[JailRunOptions]) -> Result:
    """:meth:`Jail.run_async` of ``Jail(binary, config, tmp_root, cgroup_parent, unsafe_disable=...)``."""
    jail, run_options = _split(options)
    return await jail.run_async(argv, analysis_id=analysis_id, **run_options)
