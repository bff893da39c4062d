"""The threads that read a served run's stdout and stderr pipes into their
sinks: :class:`Pumps`, one set per :class:`~scidex_jail.Server`, kept
between runs.

A thread started per stream cost every served run a thread's start
(``Thread.start`` waits until the new thread runs: 0.2-0.6 ms from the
request sent to the wait for its reply, medians of 200 runs of ``true``,
load 5-7 on two CPUs; 0.02 ms with the threads kept) and its end; a
stream handed to a thread that waits for one is a lock's release. Each
thread still pumps one stream at a time, as a thread per stream did: a
slow sink (a callback, a full pipe to the caller's stderr) holds its own
stream, never another run's or the other stream of its run; a stream that
finds no idle thread gets a new one. A thread keeps nothing of a stream
once it ended: the pipe is closed, the sink closed and dropped. At most
:data:`IDLE_MAX` wait between runs; a burst's others end with their stream.

An idle thread waits in an epoll of its own, and a stream is handed to it
by adding the pipe to that epoll: the thread wakes when the stream has
bytes or ends, not at the hand-off. A hand-off that woke it (a lock's
release) made it run as the request went, beside the server's work on the
run, only to wait again (issue 36). Closing the set wakes its idle threads
through a pipe every such epoll watches.
"""

from __future__ import annotations

import os
import select
import threading
from typing import List, Optional, Tuple

from ._streams import Sink

#: A stream to pump: its pipe's read end, its sink, the run's stop (read
#: only what is buffered, then end), and the event set once it ended.
_Job = Tuple[int, Sink, threading.Event, threading.Event]

#: How many threads wait for a stream at most: a burst of runs (two
#: streams each) ends with so many kept, not one per stream it had.
IDLE_MAX = 64


def pump(fd: int, sink: Sink, stop: threading.Event) -> None:
    """Read ``fd`` into ``sink`` until its end, or, once ``stop`` is set,
    until nothing more is buffered; close both."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    try:
        while True:
            if not poller.poll(0 if stop.is_set() else 200):
                if stop.is_set():
                    break
                continue
            try:
                data = os.read(fd, 65536)
            except InterruptedError:
                continue
            if not data:
                break
            sink.feed(data)
    finally:
        os.close(fd)
        sink.close()


class Pumps:
    """The pump threads of one server connection (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: List[_Pumper] = []
        self._closed = False
        self._threads = 0  # alive; the last to end closes the wake pipe
        # Written once, by close(), never read: its edge wakes each idle
        # thread's epoll (EPOLLET: reported once, not for as long as the
        # byte is there; a busy thread, reading its stream by a poll of
        # its own, ends after it at _rest).
        self._wake_r, self._wake_w = os.pipe()

    def start(self, fd: int, sink: Sink, stop: threading.Event) -> threading.Event:
        """Pump ``fd`` into ``sink`` (:func:`pump`) from a thread of the
        set; the event returned is set once the stream ended and both are
        closed. The fd and the sink are the thread's from the call on."""
        done = threading.Event()
        job = (fd, sink, stop, done)
        with self._lock:
            closed = self._closed
            idle = self._idle.pop() if self._idle else None
            if idle is not None:
                # Under the lock: the idle thread reads its job under it,
                # and ends only when it has none and the set is closed.
                try:
                    idle.hand(job)
                except BaseException:
                    self._idle.append(idle)
                    _drop(job)
                    raise
                return done
            if not closed:
                self._threads += 1
        if closed:
            # After close() (a run started as its server closed): the wake
            # pipe may be gone; a thread of its own pumps the stream and
            # ends, as a thread per stream did.
            threading.Thread(target=_alone, args=(job,), name="scidex-jail-pump", daemon=True).start()
            return done
        try:
            p = _Pumper(self)
        except BaseException:
            self._ended()
            _drop(job)
            raise
        try:
            p.hand(job)
        except BaseException:
            p.loop_never()
            _drop(job)
            raise
        # As a thread per stream was: a start() that raised (a Ctrl-C as
        # it waits for the thread) may have started it, which has the job.
        threading.Thread(target=p.loop, name="scidex-jail-pump", daemon=True).start()
        return done

    def _rest(self, p: "_Pumper") -> bool:
        """Take a thread back once its stream ended; False: it ends."""
        with self._lock:
            if self._closed or len(self._idle) >= IDLE_MAX:
                return False
            self._idle.append(p)
            return True

    def _ended(self) -> None:
        """A thread ended (or never started): the last one after close()
        closes the wake pipe, which no epoll watches any more."""
        with self._lock:
            self._threads -= 1
            last = self._closed and self._threads == 0
        if last:
            self._close_wake()

    def _close_wake(self) -> None:
        os.close(self._wake_r)
        os.close(self._wake_w)

    def close(self) -> None:
        """End the idle threads, and the busy ones once their stream ended."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._idle = []
            none_left = self._threads == 0
        if none_left:
            self._close_wake()
            return
        # Not closed here: a thread whose epoll has yet to report the edge
        # would lose it with the file (and wait for ever).
        os.write(self._wake_w, b"x")


def _alone(job: _Job) -> None:
    """Pump a stream from a thread of its own, which ends with it."""
    fd, sink, stop, done = job
    try:
        pump(fd, sink, stop)
    finally:
        done.set()


def _drop(job: _Job) -> None:
    """A stream no thread got: closed and marked ended, as a pumped one."""
    fd, sink, _, done = job
    try:
        os.close(fd)
        sink.close()
    finally:
        done.set()


class _Pumper:
    """One thread of a :class:`Pumps`: pumps the stream it is handed, then
    waits for the next (the set closed: it ends)."""

    def __init__(self, pumps: Pumps) -> None:
        self._pumps = pumps
        self._job: Optional[_Job] = None
        self._ep = select.epoll()
        try:
            self._ep.register(pumps._wake_r, select.EPOLLIN | select.EPOLLET)
        except BaseException:
            self._ep.close()
            raise

    def hand(self, job: _Job) -> None:
        """Give the thread a stream (under the set's lock, or before the
        thread starts): it wakes once the stream has bytes or ended."""
        self._ep.register(job[0], select.EPOLLIN)
        self._job = job

    def loop(self) -> None:
        try:
            while self._next():
                pass
        finally:
            self.loop_never()

    def loop_never(self) -> None:
        """The thread's end (or its start failed): its epoll closed, the
        set told."""
        self._ep.close()
        self._pumps._ended()

    def _next(self) -> bool:
        """Wait for a stream and pump it; whether the thread goes on. Its
        stream is a local of this call: nothing of it stays while the
        thread waits for the next."""
        while True:
            events = self._ep.poll()
            with self._pumps._lock:
                job = self._job
                if job is None and self._pumps._closed:
                    return False  # idle, woken by close(): no stream comes
            if job is not None and any(f == job[0] for f, _ in events):
                break
        self._job = None
        return self._pump(job)

    def _pump(self, job: _Job) -> bool:
        """Pump one stream; whether the thread goes on. A sink that raised
        past its Tee (not an Exception) ends the thread, as it ended a
        thread per stream; its stream is closed and marked ended all the
        same."""
        fd, sink, stop, done = job
        goes_on = False
        try:
            # Out of the idle wait's epoll before pump() closes it: a copy
            # held elsewhere (a fork's child before its exec) would keep it
            # there under a number the next stream may reuse.
            self._ep.unregister(fd)
            pump(fd, sink, stop)
            # Back in the set before the run sees its end: a run started
            # right after this one's end finds the thread idle.
            goes_on = self._pumps._rest(self)
        finally:
            done.set()
        return goes_on
