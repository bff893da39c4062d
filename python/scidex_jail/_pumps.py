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

    def start(self, fd: int, sink: Sink, stop: threading.Event) -> threading.Event:
        """Pump ``fd`` into ``sink`` (:func:`pump`) from a thread of the
        set; the event returned is set once the stream ended and both are
        closed. The fd and the sink are the thread's from the call on."""
        done = threading.Event()
        with self._lock:
            idle = self._idle.pop() if self._idle else None
        if idle is not None:
            idle.hand((fd, sink, stop, done))
            return done
        p = _Pumper(self)
        p.hand((fd, sink, stop, done))
        threading.Thread(target=p.loop, name="scidex-jail-pump", daemon=True).start()
        return done

    def _rest(self, p: "_Pumper") -> bool:
        """Take a thread back once its stream ended; False: it ends."""
        with self._lock:
            if self._closed or len(self._idle) >= IDLE_MAX:
                return False
            self._idle.append(p)
            return True

    def close(self) -> None:
        """End the idle threads, and the busy ones once their stream ended."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for p in idle:
            p.hand(None)


class _Pumper:
    """One thread of a :class:`Pumps`: pumps the stream it is handed, then
    waits for the next (None: it ends)."""

    def __init__(self, pumps: Pumps) -> None:
        self._pumps = pumps
        self._job: Optional[_Job] = None
        # Released once per hand-off: a Lock, the cheapest wait there is, as
        # a semaphore of 0 or 1 (each hand-off follows the thread's rest).
        self._go = threading.Lock()
        self._go.acquire()

    def hand(self, job: Optional[_Job]) -> None:
        self._job = job
        self._go.release()

    def loop(self) -> None:
        while self._next():
            pass

    def _next(self) -> bool:
        """Wait for a stream and pump it; whether the thread goes on. Its
        stream is a local of this call: nothing of it stays while the
        thread waits for the next."""
        self._go.acquire()
        job, self._job = self._job, None
        return job is not None and self._pump(job)

    def _pump(self, job: _Job) -> bool:
        """Pump one stream; whether the thread goes on. A sink that raised
        past its Tee (not an Exception) ends the thread, as it ended a
        thread per stream; its stream is closed and marked ended all the
        same."""
        fd, sink, stop, done = job
        goes_on = False
        try:
            pump(fd, sink, stop)
            # Back in the set before the run sees its end: a run started
            # right after this one's end finds the thread idle.
            goes_on = self._pumps._rest(self)
        finally:
            done.set()
        return goes_on
