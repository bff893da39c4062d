"""The exceptions of scidex_jail.

Every error the package raises about the jail itself is a :class:`JailError`;
bad arguments are plain :class:`ValueError` (raised before anything starts),
and the database side raises :class:`scidex_jail.post_process.CommitError`.
"""

from __future__ import annotations

import errno

from typing import Any, Mapping, Optional


class JailError(Exception):
    """The jail did not produce a usable result.

    ``exit_code`` is what the jail exited with (``None`` if it never
    started), ``stderr_tail`` the end of its standard error (where the jail
    writes its own one-line messages), ``report`` the parsed report when one
    was written.
    """

    def __init__(
        self,
        message: str,
        *,
        exit_code: Optional[int] = None,
        stderr_tail: str = "",
        report: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        self.report: Optional[Mapping[str, Any]] = report


class JailSetupError(JailError):
    """The jail failed before the analysis ran (it exited 125).

    ``stage`` and ``message`` come from the report's ``setup_error`` when the
    jail got far enough to write a report (e.g. ``"mounts"``); when it
    refused the command line itself (an unknown profile, a missing ``--ro``
    path) no report exists, ``stage`` is ``"command line"`` and ``message``
    is the jail's own message from its standard error, e.g.
    ``--profile "nope": no such profile; known: default, notebook, ...``.
    Nothing of the run is left behind in either case.
    """

    def __init__(
        self,
        stage: str,
        message: str,
        *,
        exit_code: Optional[int] = 125,
        stderr_tail: str = "",
        report: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(
            f"scidex-jail could not start the analysis (stage {stage!r}): {message}",
            exit_code=exit_code,
            stderr_tail=stderr_tail,
            report=report,
        )
        self.stage = stage
        self.message = message


class BadRequestError(JailSetupError, ValueError):
    """``scidex-jail serve`` refused the run's request for one value (its
    ``bad_request`` reply), its message naming the keyword (``keyword ro
    "/proc/self" ...``): ``field`` is the request's field as the reply
    names it (``run.read_only``), ``keyword`` the argument of
    :func:`scidex_jail.run` that gave it (``ro``; None when no argument
    did). A :class:`JailSetupError` of stage ``"command line"`` (what a
    ``scidex-jail run`` refusing the same value raises) and a
    :class:`ValueError`, as a bad argument is. Nothing of the run exists."""

    def __init__(self, message: str, *, field: str, keyword: Optional[str], exit_code: Optional[int] = 125) -> None:
        super().__init__("command line", message, exit_code=exit_code, stderr_tail=message)
        self.field = field
        self.keyword = keyword


class JailNotFoundError(JailError, FileNotFoundError):
    """The scidex-jail binary is not where it was looked for.

    ``paths`` lists every place that was tried, in order. Also a
    :class:`FileNotFoundError`, as :func:`subprocess.run` raises for a
    missing program.
    """

    def __init__(self, paths: tuple[str, ...], hint: str) -> None:
        tried = ", ".join(paths) if paths else "(nowhere)"
        self._message = f"scidex-jail binary not found (looked at: {tried}); {hint}"
        JailError.__init__(self, self._message)
        self.errno = errno.ENOENT
        self.paths = paths
        self.filename = paths[0] if paths else None

    def __str__(self) -> str:
        return self._message


class ServerRefusedError(JailError):
    """``scidex-jail serve`` refused a run without starting it (its
    ``refused`` reply): its queue is full (``--max-runs`` runs going and
    ``--queue`` waiting: try again later) or it is shutting down;
    ``reason`` is the reply's (``queue_full``, ``shutting_down``). Nothing
    of the run exists. Raised by :class:`Server` itself when the server
    refuses the connection (``too_many_clients``: the most clients it takes
    are connected: try again later)."""

    def __init__(self, message: str, *, reason: str = "", exit_code: Optional[int] = None) -> None:
        super().__init__(message, exit_code=exit_code)
        self.reason = reason


class RunLostError(JailError):
    """``scidex-jail serve`` accepted the run, then went away (it was
    killed, or dropped the connection) before its reply: the run may have
    started, and its outcome is unknown; no report came. An analysis the
    server ran died with it (or was cancelled, when only the connection
    ended); ``scidex-jail gc`` removes what a killed server left.
    ``exit_code`` is 121, what ``scidex-jail run --server`` exits with
    then: not 125, which says the run never started."""
