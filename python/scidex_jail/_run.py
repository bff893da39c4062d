"""The blocking runner: run(), start() and the Run handle."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import IO, Mapping, Optional, Sequence

from ._errors import JailError
from ._options import DurationArg, PathArg, SizeArg, build_spec
from ._prepared import Prepared, StdinArg
from ._result import Result
from ._streams import Destination, Sink


def _pump(fd: int, sink: Sink) -> None:
    try:
        while True:
            try:
                data = os.read(fd, 65536)
            except InterruptedError:
                continue
            if not data:
                break
            sink.feed(data)
    finally:
        sink.close()


def _feed(f: IO[bytes], data: bytes) -> None:
    try:
        f.write(data)
    except (BrokenPipeError, OSError):
        pass  # the analysis did not read it all: its business
    finally:
        try:
            f.close()
        except OSError:
            pass


class Run:
    """A started run: ``wait()`` for its :class:`Result`, ``cancel()`` it.

    Made by :func:`start`. ``pid`` is the jail's process id. Used as a
    context manager, leaving the block cancels the run if it is still going
    and waits for it, so no jail outlives the block::

        with scidex_jail.start(["/usr/bin/python3", "long.py"], analysis_id="a1") as run:
            ...
            run.cancel()
            result = run.wait()   # result.status == "cancelled"
    """

    def __init__(self, prepared: Prepared) -> None:
        self._prep = prepared
        self._lock = threading.Lock()
        self._outcome: Optional[Result] = None
        self._error: Optional[BaseException] = None
        self._threads: list[threading.Thread] = []
        assert prepared.out is not None and prepared.err is not None
        try:
            self._proc = subprocess.Popen(
                prepared.command(),
                stdin=prepared.stdin_child,
                stdout=prepared.out.child,
                stderr=prepared.err.child,
                close_fds=True,
            )
        except BaseException:
            prepared.close_sinks()
            prepared.cleanup()
            raise
        try:
            prepared.started()
            for pipe, plan in ((self._proc.stdout, prepared.out), (self._proc.stderr, prepared.err)):
                if pipe is not None and plan.sink is not None:
                    t = threading.Thread(target=_pump, args=(pipe.fileno(), plan.sink), daemon=True)
                    t.start()
                    self._threads.append(t)
            if self._proc.stdin is not None and prepared.stdin_data is not None:
                t = threading.Thread(target=_feed, args=(self._proc.stdin, prepared.stdin_data), daemon=True)
                t.start()
                self._threads.append(t)
        except BaseException:
            # Interrupted (or out of threads) right after the start: no
            # jail may outlive the failed call.
            self.abort()
            raise

    @property
    def pid(self) -> int:
        """The jail's process id (the supervisor; the analysis runs below it)."""
        return self._proc.pid

    @property
    def analysis_id(self) -> str:
        """The analysis ID the run was started with."""
        return self._prep.spec.analysis_id

    @property
    def command(self) -> list[str]:
        """The jail's command line, for logs."""
        return list(self._proc.args)  # type: ignore[arg-type]

    def poll(self) -> bool:
        """True once the jail has exited (then ``wait()`` returns at once)."""
        return self._proc.poll() is not None

    def cancel(self) -> None:
        """Ask the jail to end the run: SIGTERM to the jail, which stops the
        analysis (SIGTERM, then SIGKILL of every process after the grace),
        removes its cgroup leaf and run directory, and reports ``cancelled``.
        Returns at once; ``wait()`` gives the result. A no-op once the run
        has ended."""
        if self._proc.returncode is None:
            try:
                self._proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass

    def wait(self, timeout: Optional[float] = None) -> Result:
        """Wait for the run to end and return its :class:`Result`.

        Raises :class:`TimeoutError` if ``timeout`` seconds pass first (the
        run goes on), :class:`JailSetupError` when the jail could not start
        the analysis, :class:`JailError` when it wrote no report. Calling it
        again returns (or raises) the same.
        """
        try:
            rc = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"run {self.analysis_id!r} still going after {timeout} s") from None
        with self._lock:
            if self._outcome is None and self._error is None:
                for t in self._threads:
                    t.join()
                for f in (self._proc.stdout, self._proc.stderr):
                    if f is not None:
                        f.close()
                try:
                    self._outcome = self._prep.finish(rc)
                except BaseException as e:
                    self._error = e
                finally:
                    self._prep.cleanup()
            if self._error is not None:
                raise self._error
            assert self._outcome is not None
            return self._outcome

    def abort(self) -> None:
        """Cancel and wait for the jail to exit, through further interrupts:
        what ``run()`` does on KeyboardInterrupt before re-raising it."""
        self.cancel()
        while True:
            try:
                self._proc.wait()
                break
            except KeyboardInterrupt:
                self.cancel()
        try:
            self.wait()
        except (JailError, OSError):
            pass

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.returncode is None and self._proc.poll() is None:
            self.abort()


def start(
    argv: Sequence[str],
    *,
    analysis_id: str,
    profile: Optional[str] = None,
    timeout: Optional[DurationArg] = None,
    memory: Optional[SizeArg] = None,
    cpus: Optional[float] = None,
    pids: Optional[int] = None,
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
    stdin: StdinArg = None,
    stdout: Destination = None,
    stderr: Destination = None,
    binary: Optional[PathArg] = None,
    grace: Optional[DurationArg] = None,
    config: Optional[PathArg] = None,
    tmp_root: Optional[PathArg] = None,
    cgroup_parent: Optional[PathArg] = None,
    unsafe_disable: Sequence[str] = (),
) -> Run:
    """Start ``argv`` as an analysis in the jail and return its :class:`Run`.

    Takes the arguments of :func:`run`; returns as soon as the jail is
    started. Raises ValueError for a bad argument and JailNotFoundError for a
    missing binary, before anything is started.
    """
    spec = build_spec(
        argv, analysis_id=analysis_id, profile=profile, config=config, timeout=timeout, grace=grace,
        memory=memory, cpus=cpus, pids=pids, disk=disk, net=net, allow_tcp=allow_tcp, root=root,
        ro=ro, rw=rw, inputs=inputs, env=env, collect=collect, keep=keep, tmp_root=tmp_root,
        cgroup_parent=cgroup_parent, unsafe_disable=unsafe_disable, binary=binary,
    )  # fmt: skip
    return Run(Prepared(spec, stdin, stdout, stderr))


def run(
    argv: Sequence[str],
    *,
    analysis_id: str,
    profile: Optional[str] = None,
    timeout: Optional[DurationArg] = None,
    memory: Optional[SizeArg] = None,
    cpus: Optional[float] = None,
    pids: Optional[int] = None,
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
    stdin: StdinArg = None,
    stdout: Destination = None,
    stderr: Destination = None,
    binary: Optional[PathArg] = None,
    grace: Optional[DurationArg] = None,
    config: Optional[PathArg] = None,
    tmp_root: Optional[PathArg] = None,
    cgroup_parent: Optional[PathArg] = None,
    unsafe_disable: Sequence[str] = (),
) -> Result:
    """Run ``argv`` as an analysis in the jail and return its :class:`Result`.

    ``argv`` is the command, a list (no shell, ever); the analysis runs in
    its own fresh directory ``<tmp_root>/scidex-analysis-<analysis_id>/``,
    which is its cwd and HOME, with nothing of this process' environment
    but ``env``. Arguments left as None come from the profile
    (``profile``, default ``"default"``):

    - ``timeout``: wall-clock budget, seconds / timedelta / ``"90s"``
      (0 = none); ``grace``: time between SIGTERM and SIGKILL;
    - ``memory``, ``disk``: bytes or ``"512M"``/``"2G"``; ``cpus``: CPU
      quota (0.5, 2); ``pids``: processes and threads;
    - ``net``: ``"none"``, ``"loopback"`` or ``"host"``; ``allow_tcp``:
      outbound ports with ``net="host"`` (never PostgreSQL's);
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
    - ``binary``: the jail (default ``$SCIDEX_JAIL_BIN``, then PATH, then
      ``/usr/bin/scidex-jail``); ``config``: a profiles file;
      ``tmp_root``: where run directories are made; ``cgroup_parent``: the
      delegated cgroup for the run's leaf (default: the jail's own);
      ``unsafe_disable``: layers to switch off by name (``("cgroup",)``
      for a rootless run on a host with no delegated cgroup: no limits
      then; the report lists what that degrades), as ``--unsafe-disable``.

    Every ending of the analysis (exit codes, signals, timeout, OOM, PID
    limit, cancel) is a :class:`Result`; check ``status``. Raises
    ValueError for bad arguments and JailNotFoundError for a missing
    binary (before anything starts), JailSetupError when the jail could
    not start the analysis (exit 125), JailError when it wrote no report.
    On KeyboardInterrupt (or any exception while waiting) the run is
    cancelled and waited for, then the exception propagates.
    """
    handle = start(
        argv, analysis_id=analysis_id, profile=profile, config=config, timeout=timeout, grace=grace,
        memory=memory, cpus=cpus, pids=pids, disk=disk, net=net, allow_tcp=allow_tcp, root=root,
        ro=ro, rw=rw, inputs=inputs, env=env, collect=collect, keep=keep, tmp_root=tmp_root,
        cgroup_parent=cgroup_parent, unsafe_disable=unsafe_disable, stdin=stdin, stdout=stdout, stderr=stderr, binary=binary,
    )  # fmt: skip
    try:
        return handle.wait()
    except (JailError, OSError):
        raise
    except BaseException:
        handle.abort()
        raise
