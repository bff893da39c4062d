"""The client of ``scidex-jail serve``, the resident server (docs/serve.md):
:class:`Server` starts it as a child or connects to one listening on a unix
socket, and runs analyses through it with the semantics and results of
:func:`scidex_jail.run`, :func:`~scidex_jail.start` and
:func:`~scidex_jail.run_async`."""

from __future__ import annotations

import itertools
import json
import os
import pwd
import socket as _socket
import struct
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, cast

from ._client import JAIL_KEYWORDS, RUN_KEYWORDS, Jail, JailRunOptions, RunOptions
from ._errors import JailError, ServerRefusedError
from ._limits import DurationArg, _duration
from ._options import JailOptions, PathArg, _absolute, check_keywords, find_binary
from ._prepared import EXIT_SETUP, Prepared, describe_exit
from ._pumps import Pumps
from ._result import Result
from ._run import _pump, wait_or_abort
from ._server_async import run_async_on
from ._server_run import END_EVENTS, Message, ServerRun, Tracker
from ._streams import Destination, Tail, check_destination, plan_stderr

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

#: The protocol version this client speaks: 2, where a run request
#: carries the run as an object (:meth:`Spec.request`).
PROTOCOL = 2
#: The longest line the server reads.
MAX_LINE = 1 << 20


def _serve_flags(
    max_runs: Optional[int], queue: Optional[int], slots: Optional[int], profiles: Sequence[str], idle: Optional[DurationArg]
) -> list[str]:
    flags = []
    for name, value in (("max-runs", max_runs), ("queue", queue), ("slots", slots)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name.replace('-', '_')} {value!r}: give a count (an int, 0 or more)")
            flags.append(f"--{name}={value}")
    if isinstance(profiles, str):
        raise ValueError(f"slot_profiles {profiles!r}: give a sequence of profile names, e.g. ({profiles!r},)")
    for p in profiles:
        if not isinstance(p, str) or not p or p.startswith("-") or "\0" in p:
            raise ValueError(f"slot_profiles entry {p!r}: give a profile name such as 'default'")
        flags.append(f"--slot-profile={p}")
    text = _duration("slot_idle", idle)
    if text is not None:
        flags.append(f"--slot-idle={text}")
    return flags


def _sweep(binary: str, tmp_root: Optional[str], cgroup_parent: Optional[str]) -> bytes:
    """What an earlier server killed in its tracks left (its runs'
    directories in ``tmp_root``, its slots' and runs' cgroup leaves), removed
    as ``scidex-jail gc`` does: only what provably belongs to a dead jail
    (docs/serve.md). Returns its complaint, for the server's stderr, when it
    could not finish: a sweep that fails never keeps the server from
    starting (its runs sweep their own tmp root as they start)."""
    argv = [binary, "gc"]
    if tmp_root is not None:
        argv.append(f"--tmp-root={tmp_root}")
    if cgroup_parent is not None:
        argv.append(f"--cgroup-parent={cgroup_parent}")
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"scidex-jail gc, the sweep before the server starts: {e}\n".encode()
    if done.returncode != 0:
        return b"scidex-jail gc, the sweep before the server starts, exited %d: %s" % (done.returncode, done.stderr)
    return b""


class Server:
    """``scidex-jail serve``, and runs through it.

    ``Server()`` starts the server as its child, speaking on a socket pair
    given as its stdin and stdout (binary found as :class:`Jail` finds it);
    ``Server(socket="/run/scidex/jail.sock")`` connects to one already
    listening (``scidex-jail serve --socket PATH``, as this process' user or
    root: the server's uid is checked before anything is sent, and one of
    another account is refused with a :class:`JailError`). ``config``, ``tmp_root``, ``cgroup_parent``, ``unsafe_disable``
    and ``validate`` are the settings of :class:`Jail`, for every run (a run
    may override the first four); ``max_runs``, ``queue``, ``slots``,
    ``slot_profiles`` and ``slot_idle`` are the child server's flags (it
    gets ``config``, ``cgroup_parent`` and ``unsafe_disable`` too, to make
    its slots as its runs will be: with ``unsafe_disable=("cgroup",)``,
    rootless on a cgroup v1 host, slots without a cgroup);
    ``stderr`` (a :data:`Destination`, default: this process' stderr) gets
    its own messages. A child server starts after ``scidex-jail gc`` has
    swept ``tmp_root`` (and ``cgroup_parent``) of what an earlier server,
    killed with runs going, left behind. Use it as a context manager::

        with scidex_jail.Server(tmp_root="/srv/runs") as server:
            r = server.run(["/usr/bin/python3", "a.py"], analysis_id="a42", ro=["a.py"])
            run = server.start(["/bin/sleep", "30"], analysis_id="a43")
            run.cancel(); run.wait().status   # "cancelled"

    :meth:`run`, :meth:`start` and :meth:`run_async` take the arguments of
    :func:`scidex_jail.run` and give the same results and errors; the
    analysis' stdin, stdout and stderr travel with the request as
    descriptors. Share one server between threads and tasks. Leaving the
    block (:meth:`close`) cancels the runs still going, waits for their
    ends, and ends the child server (or the connection).
    """

    def __init__(
        self,
        binary: Optional[PathArg] = None,
        config: Optional[PathArg] = None,
        tmp_root: Optional[PathArg] = None,
        cgroup_parent: Optional[PathArg] = None,
        *,
        socket: Optional[PathArg] = None,
        unsafe_disable: Sequence[str] = (),
        validate: bool = False,
        max_runs: Optional[int] = None,
        queue: Optional[int] = None,
        slots: Optional[int] = None,
        slot_profiles: Sequence[str] = (),
        slot_idle: Optional[DurationArg] = None,
        stderr: Destination = None,
        timeout: float = 60.0,
    ) -> None:
        flags = _serve_flags(max_runs, queue, slots, slot_profiles, slot_idle)
        check_destination("stderr", stderr)
        self.socket_path = _absolute("socket", socket) if socket is not None else None
        if self.socket_path is not None and flags:
            raise ValueError("max_runs, queue, slots, slot_profiles and slot_idle are flags of the server that listens on socket")
        if self.socket_path is None:
            binary = find_binary(binary)  # runs check their limits against it too
        self._jail = Jail(binary, config, tmp_root, cgroup_parent, unsafe_disable=unsafe_disable, validate=validate)
        self.binary = self._jail.binary
        self._lock = threading.Condition()
        self._send_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: Dict[str, Tracker] = {}
        self._unacked: Dict[str, None] = {}  # requests yet to be accepted or refused, in order
        self._closed = False
        self._gone: Optional[JailError] = None
        self._proc: Optional[subprocess.Popen[bytes]] = None
        self._tail = Tail()
        self._stderr_thread: Optional[threading.Thread] = None
        self._pumps = Pumps()  # the runs' stdout and stderr (ServerRun)
        if self.socket_path is None:
            self._sock = self._spawn(flags, stderr)
        else:
            self._sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            try:
                self._sock.connect(self.socket_path)
                _check_server(self._sock, self.socket_path)
            except OSError as e:
                self._sock.close()
                raise JailError(f"connect to scidex-jail serve at {self.socket_path}: {e}") from e
            except BaseException:
                self._sock.close()
                raise
        self._file = self._sock.makefile("rb")
        try:
            hello = self._hello(timeout)
        except BaseException:
            self._kill()
            raise
        self.version: str = str(hello.get("version", ""))
        self._reader = threading.Thread(target=self._read, name="scidex-jail-serve-reader", daemon=True)
        self._reader.start()

    def __repr__(self) -> str:
        where = f"socket={self.socket_path!r}" if self.socket_path else f"binary={self.binary!r}, pid={self.pid}"
        return f"Server({where}, version={self.version!r}, closed={self._closed})"

    @property
    def pid(self) -> Optional[int]:
        """The server's process id: the child's, or the peer's on a socket."""
        if self._proc is not None:
            return self._proc.pid
        try:
            return _peer(self._sock)[0]
        except OSError:
            return None

    # --- the connection ---------------------------------------------------

    def _spawn(self, flags: list[str], stderr: Destination) -> _socket.socket:
        assert self.binary is not None
        if self._jail.config is not None:  # for its slots' profiles; each request names it too
            flags = [*flags, f"--config={self._jail.config}"]
        if self._jail.cgroup_parent is not None:  # where its slots go: each request names it too
            flags = [*flags, f"--cgroup-parent={self._jail.cgroup_parent}"]
        # Its slots are made as its requests will run: without a cgroup
        # (rootless on cgroup v1) it makes slots without one, not failing ones.
        flags += [f"--unsafe-disable={layer}" for layer in self._jail.unsafe_disable]
        # The sweep first: it may take a while, and a Ctrl-C during it
        # leaves nothing open.
        problem = _sweep(self.binary, self._jail.tmp_root, self._jail.cgroup_parent)
        mine, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        plan = plan_stderr(stderr, self._tail)
        assert plan.sink is not None
        if problem:
            plan.sink.feed(problem)
        try:
            # Its own session: a Ctrl-C for this process is this process'
            # to handle (leaving the block ends the server and its runs).
            self._proc = subprocess.Popen(
                [self.binary, "serve", *flags], stdin=theirs.fileno(), stdout=theirs.fileno(),
                stderr=subprocess.PIPE, close_fds=True, start_new_session=True,
            )  # fmt: skip
        except BaseException:
            mine.close()
            plan.sink.close()
            raise
        finally:
            theirs.close()
        assert self._proc.stderr is not None
        self._stderr_thread = threading.Thread(target=_pump, args=(self._proc.stderr.fileno(), plan.sink), daemon=True)
        self._stderr_thread.start()
        return mine

    def _why_gone(self, what: str) -> str:
        """``what``, and how the child ended with the end of its stderr."""
        if self._proc is None:
            return f"scidex-jail serve at {self.socket_path} {what}"
        try:
            rc: Optional[int] = self._proc.wait(5)
        except subprocess.TimeoutExpired:
            rc = None
        if self._stderr_thread is not None:
            self._stderr_thread.join(1)
        ended = describe_exit(rc) if rc is not None else "is still running"
        return f"scidex-jail serve {what} (it {ended}); its stderr ends: {(self._tail.text() or '')[-2000:]!r}"

    def _hello(self, timeout: float) -> Message:
        self._sock.settimeout(timeout)
        try:
            line = self._file.readline()
        except OSError as e:
            raise JailError(self._why_gone(f"said no hello in {timeout} s ({e})")) from None
        self._sock.settimeout(None)
        msg = _decode(line)
        if msg is not None and msg.get("event") in ("refused", "error"):
            # A server at its limit of clients greets so, with its reason.
            text = str(msg.get("error") or "no reason given")
            where = f"scidex-jail serve at {self.socket_path}" if self.socket_path else "scidex-jail serve"
            if msg.get("event") == "refused":
                raise ServerRefusedError(f"{where} refused: {text}", reason=str(msg.get("reason") or ""), exit_code=EXIT_SETUP)
            raise JailError(f"{where} greeted with {text}", exit_code=EXIT_SETUP)
        if msg is None or msg.get("event") != "hello":
            said = f"said {line[:200]!r} instead of its hello" if line else "closed the connection before its hello"
            raise JailError(self._why_gone(said))
        if msg.get("protocol") != PROTOCOL:
            raise JailError(f"scidex-jail serve speaks protocol {msg.get('protocol')!r}; this package speaks {PROTOCOL}")
        return msg

    def _read(self) -> None:
        """The reader thread: hand each reply to the request it names."""
        try:
            while True:
                line = self._file.readline()
                if not line:
                    break
                msg = _decode(line)
                if msg is not None:
                    self._dispatch(msg)
        except (OSError, ValueError):
            pass
        finally:
            with self._lock:
                closing = self._closed
                self._closed = True
            gone = self._why_gone(("was closed" if closing else "went away") + " before the run's reply")
            with self._lock:
                self._gone = JailError(gone)
                lost, self._pending = list(self._pending.values()), {}
                self._lock.notify_all()
            for t in lost:
                t.on_lost(gone)

    def _dispatch(self, msg: Message) -> None:
        req, event = msg.get("req"), msg.get("event")
        with self._lock:
            if not req:
                # A line the server could not read: ours, in order, so the
                # oldest request not yet answered.
                if event not in END_EVENTS or not self._unacked:
                    return
                req = next(iter(self._unacked))
            if not isinstance(req, str):
                return
            self._unacked.pop(req, None)
            tracker = self._pending.get(req)
            if event in END_EVENTS:
                self._pending.pop(req, None)
                self._lock.notify_all()
        if tracker is not None:
            tracker.on_reply(msg)

    def submit(self, tracker: Tracker, fields: Message, fds: Sequence[int]) -> str:
        """Send a ``run`` request with ``fields`` and the descriptors
        ``fds`` in one ``sendmsg``; the replies go to ``tracker``."""
        with self._lock:
            if self._closed:
                raise self._gone or JailError("the Server is closed: start runs before leaving its block")
            req = f"r{next(self._ids)}"
            data = (json.dumps({"op": "run", "req": req, **fields}, separators=(",", ":")) + "\n").encode()
            if len(data) > MAX_LINE:
                raise ValueError(f"the run's request is {len(data)} bytes; the server reads lines up to {MAX_LINE}")
            tracker.req = req
            self._pending[req] = tracker
            self._unacked[req] = None
        try:
            with self._send_lock:
                n = _socket.send_fds(self._sock, [data], list(fds), _socket.MSG_NOSIGNAL)
                if n < len(data):
                    self._sock.sendall(data[n:], _socket.MSG_NOSIGNAL)
        except OSError as e:
            with self._lock:
                self._pending.pop(req, None)
                self._unacked.pop(req, None)
            raise JailError(f"send the run's request to scidex-jail serve: {e}") from e
        return req

    def send_cancel(self, req: str) -> None:
        """Send ``cancel`` for the request ``req``."""
        data = (json.dumps({"op": "cancel", "req": req}, separators=(",", ":")) + "\n").encode()
        with self._send_lock:
            self._sock.sendall(data, _socket.MSG_NOSIGNAL)

    # --- runs -------------------------------------------------------------

    def _prepare(self, argv: Sequence[str], analysis_id: str, options: JailRunOptions) -> Prepared:
        check_keywords(options, RUN_KEYWORDS | JAIL_KEYWORDS, self.binary)
        given = cast(Dict[str, Any], {k: v for k, v in options.items() if k in JAIL_KEYWORDS})
        b = given.get("binary")
        if self._proc is not None and b is not None and _absolute("binary", b) != os.path.abspath(self.binary or ""):
            raise ValueError(f"binary {b!r}: this server runs {self.binary}; leave binary out")
        j = jail = self._jail
        if given:
            settings: Dict[str, Any] = {"binary": j.binary, "config": j.config, "tmp_root": j.tmp_root,
                                        "cgroup_parent": j.cgroup_parent, "unsafe_disable": j.unsafe_disable}  # fmt: skip
            settings.update(given)
            jail = Jail(**cast(JailOptions, settings), validate=j.validate)
        # else the server's own: a Jail made of its settings alone would be
        # the same (its paths are absolute and normal already), and a Jail
        # holds nothing of a run; each run checks them again (build_spec).
        run_options = cast(RunOptions, {k: v for k, v in options.items() if k not in JAIL_KEYWORDS})
        return jail._prepare(argv, analysis_id, run_options, report_file=False)

    def start(self, argv: Sequence[str], *, analysis_id: str, **options: Unpack[JailRunOptions]) -> ServerRun:
        """:func:`scidex_jail.start` through the server: returns a
        :class:`ServerRun` (``wait()``, ``cancel()``, ``poll()``) once the
        request is sent. Raises TypeError, ValueError and JailNotFoundError
        as :func:`scidex_jail.start`, JailError when the server is gone."""
        return ServerRun(self, self._prepare(argv, analysis_id, options))

    def run(self, argv: Sequence[str], *, analysis_id: str, **options: Unpack[JailRunOptions]) -> Result:
        """:func:`scidex_jail.run` through the server: the same arguments,
        :class:`Result` and errors (see :meth:`Jail.run`). On
        KeyboardInterrupt the run is cancelled and waited for."""
        return wait_or_abort(self.start(argv, analysis_id=analysis_id, **options))

    async def run_async(self, argv: Sequence[str], *, analysis_id: str, **options: Unpack[JailRunOptions]) -> Result:
        """:func:`scidex_jail.run_async` through the server: cancelling the
        task cancels the run, waits for its end, and re-raises."""
        return await run_async_on(self, self._prepare(argv, analysis_id, options))

    # --- the end ----------------------------------------------------------

    def close(self) -> None:
        """Cancel the runs still going and wait for their replies, then end
        the connection and, for a child, the server (end of its input: it
        destroys its slots and exits). Safe to call again."""
        with self._lock:
            self._closed = True
            going = list(self._pending.values())
        try:
            for t in going:
                t.cancel()
            with self._lock:
                self._lock.wait_for(lambda: not self._pending or not self._reader.is_alive())
            try:
                self._sock.shutdown(_socket.SHUT_WR)
            except OSError:
                pass
            if self._proc is None:
                try:
                    self._sock.shutdown(_socket.SHUT_RDWR)
                except OSError:
                    pass
            self._reader.join()
            if self._proc is not None:
                self._proc.wait()
        finally:
            self._kill()

    def _kill(self) -> None:
        """End what is left: the child (SIGTERM: it cancels its runs and
        exits), the socket, the stderr reader."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(60)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        try:
            self._sock.shutdown(_socket.SHUT_RDWR)
        except OSError:
            pass
        self._file.close()
        self._sock.close()
        self._pumps.close()
        if self._stderr_thread is not None:
            self._stderr_thread.join()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _peer(sock: _socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of a unix socket
    (SO_PEERCRED: a struct ucred of pid, uid, gid)."""
    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, struct.calcsize("iII"))
    pid, uid, _ = struct.unpack("iII", creds)
    return pid, uid


def _check_server(sock: _socket.socket, path: str) -> None:
    """Refuse a server that runs as neither this process' uid nor root,
    before anything is sent to it: it would get the analysis' stdin,
    stdout and stderr and could forge the report (a process of another
    account listening on a socket in a shared directory). The server
    checks its clients the same way. SO_PEERCRED is the effective uid of
    the process that called listen(2)."""
    pid, uid = _peer(sock)
    if uid in (0, os.getuid()):
        return
    try:
        who = f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        who = f"uid {uid}"
    raise JailError(
        f"scidex-jail serve at {path} runs as {who} (pid {pid}), neither this user (uid {os.getuid()}) nor root: "
        "nothing was sent to it (it would get the analysis' stdin, stdout and stderr and could forge the report); "
        "use a server of your own account or root's, on a socket in a directory only its owner can write"
    )


def _decode(line: bytes) -> Optional[Message]:
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) else None
