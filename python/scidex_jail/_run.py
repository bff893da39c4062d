"""The blocking runner: the Run handle that Jail.start returns."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import IO, Callable, Optional, Protocol

from ._errors import JailError
from ._prepared import Prepared
from ._result import Result
from ._streams import Sink


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


def _read_ready(fd: int) -> None:
    """Wait for the jail's ready byte (``--ready-fd``), or the end of file
    when it exited without writing it, and close ``fd``."""
    try:
        while True:
            try:
                os.read(fd, 1)
                return
            except InterruptedError:
                continue
    finally:
        os.close(fd)


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

    Made by :meth:`Jail.start` (and :func:`scidex_jail.start`). ``pid`` is
    the jail's process id. Used as a context manager, leaving the block
    cancels the run if it is still going and waits for it, so no jail
    outlives the block::

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
        # A SIGTERM in the first milliseconds of the jail, before its
        # handlers are registered, would kill it with no report (a Go
        # program cannot block it across its exec: the runtime unblocks
        # SIGTERM, SIGINT and SIGHUP on every thread at its start). The jail
        # says on this pipe when a cancel is safe; cancel() waits until then.
        self._sig_lock = threading.Lock()
        self._ready = False
        self._cancel_pending = False
        assert prepared.out is not None and prepared.err is not None
        ready_r, ready_w = os.pipe()
        try:
            self._proc = subprocess.Popen(
                prepared.command(ready_w),
                stdin=prepared.stdin_child,
                stdout=prepared.out.child,
                stderr=prepared.err.child,
                close_fds=True,
                pass_fds=(ready_w,),
            )
        except BaseException:
            os.close(ready_r)
            prepared.close_sinks()
            prepared.cleanup()
            raise
        finally:
            os.close(ready_w)
        try:
            t = threading.Thread(target=self._await_ready, args=(ready_r,), daemon=True)
            t.start()
        except BaseException:
            os.close(ready_r)
            self._ready = True  # no one will say: cancel() signals at once
            self.abort()
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
        has ended. Right after the start, the signal is sent as soon as the
        jail says it handles it (``--ready-fd``), so no cancel is lost."""
        with self._sig_lock:
            if not self._ready:
                self._cancel_pending = True
                return
        self._terminate()

    def _terminate(self) -> None:
        if self._proc.returncode is None:
            try:
                self._proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass

    def _await_ready(self, fd: int) -> None:
        """The thread that waits for the jail's ready byte (or its exit) and
        then sends a cancel that came meanwhile."""
        try:
            _read_ready(fd)
        finally:
            with self._sig_lock:
                self._ready = True
                pending = self._cancel_pending
            if pending:
                self._terminate()

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
        abort_run(self.cancel, self._proc.wait, self.wait)

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.returncode is None and self._proc.poll() is None:
            self.abort()


class _Handle(Protocol):
    """What wait_or_abort needs of a started run: a Run, or a ServerRun."""

    def wait(self, timeout: Optional[float] = None) -> Result: ...

    def abort(self) -> None: ...


def abort_run(cancel: Callable[[], None], until_ended: Callable[[], object], wait: Callable[[], object]) -> None:
    """Cancel a run and wait for its end (``until_ended``), cancelling again
    at each further KeyboardInterrupt; then settle it (``wait``), its own
    errors dropped: the abort of a :class:`Run` and a ``ServerRun``."""
    cancel()
    while True:
        try:
            until_ended()
            break
        except KeyboardInterrupt:
            cancel()
    try:
        wait()
    except (JailError, OSError):
        pass


def wait_or_abort(handle: _Handle) -> Result:
    """``handle.wait()``; on KeyboardInterrupt (or any exception but the
    jail's own errors) cancel the run, wait for the jail, and re-raise."""
    try:
        return handle.wait()
    except (JailError, OSError):
        raise
    except BaseException:
        handle.abort()
        raise
