"""One run through ``scidex-jail serve`` (docs/serve.md): the three
descriptors of its standard streams, its request's fields, the tracking of
its replies, and the handle that waits for them: :class:`ServerRun`, what :meth:`Server.start`
returns (the asyncio form is :mod:`._server_async`)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from ._errors import BadRequestError, JailError, JailSetupError, RunLostError, ServerRefusedError
from ._options import keyword_of
from ._prepared import EXIT_LOST, EXIT_SETUP, Prepared
from ._result import Result
from ._run import _feed, abort_run
from ._streams import Sink

#: A JSON object of the protocol.
Message = Dict[str, Any]

#: The replies that end a request: its run's report, or why it has none.
END_EVENTS = ("done", "refused", "bad_request", "error")

#: How long the analysis' stdout and stderr may stay open after the run's
#: reply (every process of the run is dead by then; only a server that
#: kept its copies would hold them) before what is buffered is read and
#: they are closed.
EOF_GRACE = 5.0


class Tracker:
    """The replies to one request, as the server's reader thread hands them
    over; a cancel asked for before the ``accepted`` reply is held until it
    (from there the server answers a cancel with a report)."""

    def __init__(self, link: Any) -> None:
        self.link = link  # the Server
        self.req = ""  # set by the server when the request is made
        self.cond = threading.Condition()
        self.accepted = False
        self.reply: Optional[Message] = None  # the reply that ended it (END_EVENTS)
        self.lost: Optional[JailError] = None  # the server went away first
        self._cancel_pending = False
        self.cancelled = False  # a cancel was sent

    def ended(self) -> bool:
        return self.reply is not None or self.lost is not None

    def on_reply(self, msg: Message) -> None:
        """Called by the reader thread with each reply naming the request."""
        event, send = msg.get("event"), False
        with self.cond:
            if event == "accepted":
                self.accepted = True
                send = self._cancel_pending and self.reply is None
                # No notify: the cond's waiters wait for the end alone, and
                # a wake for nothing cost a waiting run a thread switch.
            elif event in END_EVENTS and not self.ended():
                self.reply = msg
                self.cond.notify_all()
        if send:
            # Not from the reader thread: a send may wait for the server,
            # which may wait for the reader to take its replies.
            threading.Thread(target=self._send_cancel, daemon=True).start()
        self.changed()

    def on_lost(self, gone: str) -> None:
        """Called by the reader thread when the server went away (``gone``
        says how): the run's error says what is known of the run."""
        with self.cond:
            if not self.ended():
                self.lost = lost_run(gone, self.accepted)
            self.cond.notify_all()
        self.changed()

    def changed(self) -> None:
        """Hook: the state changed (the asyncio form wakes its task)."""

    def cancel(self) -> None:
        """Send ``cancel`` for the request, once the server has accepted it."""
        with self.cond:
            if self.ended():
                return
            if not self.accepted:
                self._cancel_pending = True
                return
        self._send_cancel()

    def _send_cancel(self) -> None:
        self.cancelled = True
        try:
            self.link.send_cancel(self.req)
        except (JailError, OSError):
            pass  # the server is gone: on_lost says so


def lost_run(gone: str, accepted: bool) -> JailError:
    """The error of a run whose server went away (``gone``) before its
    reply. The server replies ``accepted`` before it starts anything of the
    run: until then the run never started (exit 125, as ``run --server``);
    after, it may have (:class:`RunLostError`, exit 121)."""
    if accepted:
        return RunLostError(
            f"the run was accepted and may have started, but {gone}: an analysis the server ran died with it "
            "(or was cancelled, if only the connection ended); no report came; "
            "`scidex-jail gc` removes what a killed server left",
            exit_code=EXIT_LOST,
        )
    return JailError(f"{gone}, before it accepted the run: the run never started, nothing of it exists", exit_code=EXIT_SETUP)


def request_fields(prep: Prepared) -> Message:
    """The fields of the run's request besides ``op`` and ``req``: the run
    (:meth:`Spec.request`: its checked arguments, this process' cwd),
    three descriptors, and the language the server's messages name the
    values in: run()'s keywords, which the caller wrote."""
    return {"run": prep.spec.request(os.getcwd()), "stdio": 3, "names": "keyword"}


def outcome(prep: Prepared, reply: Message, cancelled: bool = False) -> Result:
    """The Result of a ``done`` reply, or the error of one that ended the
    request without a report, exactly as a ``run`` that exited so with
    that report (or none), read from the reply's fields: a ``refused``
    (a full queue, a server shutting down) is a
    :class:`ServerRefusedError` with its ``reason``; a ``bad_request`` a
    :class:`BadRequestError` naming the keyword of the field it names; an
    ``error`` to a run that was ``cancelled`` while the server held it in
    its queue a :class:`JailError` saying so (it never started: no report
    exists); any other ``error`` a :class:`JailSetupError`."""
    code = reply.get("exit_code")
    event = reply.get("event")
    if event == "done":
        report = reply.get("report")
        if not isinstance(code, int) or not isinstance(report, dict):
            raise JailError(f"scidex-jail serve sent a malformed done reply: {str(reply)[:500]}")
        return prep.conclude(code, report)
    text = str(reply.get("error") or "")
    exit_code = code if isinstance(code, int) else None
    if event == "refused":
        raise ServerRefusedError(f"scidex-jail serve refused: {text}", reason=str(reply.get("reason") or ""), exit_code=exit_code)
    if event == "bad_request":
        field = str(reply.get("field") or "")
        raise BadRequestError(text or "(no reason given)", field=field, keyword=keyword_of(field), exit_code=exit_code)
    if cancelled:
        raise JailError(
            f"run {prep.spec.analysis_id!r} was cancelled before it started: {text or '(no reason given)'}",
            exit_code=code if isinstance(code, int) else None,
            stderr_tail=text,
        )
    if code == EXIT_SETUP:
        raise JailSetupError("command line", text or "(no reason given)", stderr_tail=text)
    raise JailError(
        f"scidex-jail serve did not start the run: {text or '(no reason given)'}",
        exit_code=code if isinstance(code, int) else None,
        stderr_tail=text,
    )


class Stdio:
    """The analysis' stdin, stdout and stderr as the request sends them
    (``send``), wired as :class:`Prepared` says for a ``run`` child, and
    this side's ends: the pipes' read ends with their sinks (``reads``) and
    the write end of stdin when it is fed bytes (``stdin_w``)."""

    def __init__(self, prep: Prepared) -> None:
        assert prep.out is not None and prep.err is not None
        self.send: List[int] = []
        self.reads: List[Tuple[int, Sink]] = []
        self.stdin_w: Optional[int] = None
        self._mine: List[int] = []  # opened here for the request
        try:
            self._add(prep.stdin_child, 0, None)
            self._add(prep.out.child, 1, prep.out.sink)
            self._add(prep.err.child, 2, prep.err.sink)
        except BaseException:
            self.close_all()
            raise

    def _add(self, child: Any, std: int, sink: Optional[Sink]) -> None:
        if child is None:
            self.send.append(std)  # inherited, as by a run child
        elif child == subprocess.DEVNULL:
            fd = os.open(os.devnull, os.O_RDONLY if std == 0 else os.O_WRONLY)
            self._mine.append(fd)
            self.send.append(fd)
        elif child == subprocess.PIPE:
            r, w = os.pipe()
            if std == 0:
                self._mine.append(r)
                self.send.append(r)
                self.stdin_w = w
            else:
                self._mine.append(w)
                self.send.append(w)
                self.reads.append((r, sink if sink is not None else Sink()))
        elif isinstance(child, int):
            self.send.append(child)
        else:
            self.send.append(child.fileno())

    def sent(self) -> None:
        """The request went: close what was opened for it alone."""
        for fd in self._mine:
            os.close(fd)
        self._mine = []

    def close_all(self) -> None:
        """The request did not go: close every descriptor made for it."""
        self.sent()
        for fd, _ in self.reads:
            os.close(fd)
        self.reads = []
        if self.stdin_w is not None:
            os.close(self.stdin_w)
            self.stdin_w = None


def start_feed(fd: int, data: bytes) -> threading.Thread:
    t = threading.Thread(target=_feed, args=(os.fdopen(fd, "wb"), data), daemon=True)
    t.start()
    return t


def submit_run(link: Any, tracker: Tracker, prep: Prepared) -> Stdio:
    """Send the run's request with its descriptors; on failure close what
    was made for it and raise."""
    try:
        stdio = Stdio(prep)
    except BaseException:
        prep.close_sinks()
        prep.cleanup()
        raise
    try:
        link.submit(tracker, request_fields(prep), stdio.send)
    except BaseException:
        stdio.close_all()
        prep.close_sinks()
        prep.cleanup()
        raise
    stdio.sent()
    prep.started()
    return stdio


class ServerRun(Tracker):
    """A run started through a :class:`Server`: the interface of
    :class:`Run` (``wait()``, ``cancel()``, ``poll()``, ``abort()``, a
    context manager that cancels a run still going), with the same results
    and errors. ``pid`` is the server's process id; ``req`` the request's
    name on its connection."""

    def __init__(self, link: Any, prep: Prepared) -> None:
        super().__init__(link)
        self._prep = prep
        self._finish = threading.Lock()
        self._outcome: Optional[Result] = None
        self._error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._pumped: List[threading.Event] = []  # set as stdout and stderr end (link._pumps)
        self._feeder: Optional[threading.Thread] = None
        stdio = submit_run(link, self, prep)
        try:
            while stdio.reads:
                # The fd is the pump's before it starts: a Ctrl-C inside
                # start() (the thread may run already) must not make
                # close_all close what the thread reads.
                fd, sink = stdio.reads.pop(0)
                self._pumped.append(link._pumps.start(fd, sink, self._stop))
            if stdio.stdin_w is not None:
                w, stdio.stdin_w = stdio.stdin_w, None
                self._feeder = start_feed(w, prep.stdin_data or b"")
        except BaseException:
            stdio.close_all()
            self.abort()
            raise

    @property
    def pid(self) -> Optional[int]:
        """The server's process id (the runs' supervisor)."""
        pid: Optional[int] = self.link.pid
        return pid

    @property
    def analysis_id(self) -> str:
        """The analysis ID the run was started with."""
        return self._prep.spec.analysis_id

    @property
    def command(self) -> List[str]:
        """The ``scidex-jail run`` command line the request stands for, for logs."""
        return [self._prep.spec.binary, "run", *self._prep.spec.flags(), "--", *self._prep.spec.argv]

    def poll(self) -> bool:
        """True once the run has ended (then ``wait()`` returns at once)."""
        with self.cond:
            return self.ended()

    def wait(self, timeout: Optional[float] = None) -> Result:
        """Wait for the run to end and return its :class:`Result`: as
        :meth:`Run.wait`. A server that went away first is a :class:`JailError`."""
        with self.cond:
            if not self.cond.wait_for(self.ended, timeout):
                raise TimeoutError(f"run {self.analysis_id!r} still going after {timeout} s")
        with self._finish:
            if self._outcome is None and self._error is None:
                deadline = time.monotonic() + EOF_GRACE
                for ended in self._pumped:
                    ended.wait(max(0.0, deadline - time.monotonic()))
                if self._feeder is not None:
                    self._feeder.join(max(0.0, deadline - time.monotonic()))
                self._stop.set()
                for ended in self._pumped:
                    ended.wait()
                try:
                    if self.lost is not None:
                        raise self.lost
                    assert self.reply is not None
                    self._outcome = outcome(self._prep, self.reply, self.cancelled)
                except BaseException as e:
                    self._error = e
                finally:
                    self._prep.cleanup()
            if self._error is not None:
                raise self._error
            assert self._outcome is not None
            return self._outcome

    def abort(self) -> None:
        """Cancel and wait for the run's end through further interrupts."""
        abort_run(self.cancel, self._until_ended, self.wait)

    def _until_ended(self) -> None:
        with self.cond:
            self.cond.wait_for(self.ended)

    def __enter__(self) -> "ServerRun":
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.poll():
            self.abort()
