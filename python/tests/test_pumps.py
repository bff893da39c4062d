"""The threads a Server keeps to pump its runs' stdout and stderr
(scidex_jail._pumps), on pipes of the test's own: each stream is read
whole and closed, a thread pumps one stream at a time, at most IDLE_MAX
wait between runs, and closing ends them."""

from __future__ import annotations

import os
import threading
from typing import List, Optional, Set, Tuple

import pytest

from conftest import wait_for
from scidex_jail._pumps import IDLE_MAX, Pumps
from scidex_jail._streams import Sink

pytestmark = pytest.mark.unit


class _Kept(Sink):
    """Keeps what it is fed and whether it was closed; blocks in feed
    until ``go`` is set."""

    def __init__(self, go: Optional[threading.Event] = None) -> None:
        self.data = b""
        self.closed = False
        self.go = go

    def feed(self, data: bytes) -> None:
        if self.go is not None:
            self.go.wait(60)
        self.data += data

    def close(self) -> None:
        self.closed = True


#: The pump threads alive before the test (a session's Server keeps its own).
_before: Set[threading.Thread] = set()


@pytest.fixture(autouse=True)
def _others() -> None:
    _before.clear()
    _before.update(t for t in threading.enumerate() if t.name == "scidex-jail-pump")


def _alive() -> List[threading.Thread]:
    """The pump threads the test started that are alive."""
    return [t for t in threading.enumerate() if t.name == "scidex-jail-pump" and t not in _before]


def _stream(pumps: Pumps, data: bytes, go: Optional[threading.Event] = None) -> Tuple[_Kept, threading.Event, int]:
    """A pipe with ``data`` in it, its read end pumped; the write end is
    the caller's to close."""
    r, w = os.pipe()
    os.write(w, data)
    sink = _Kept(go)
    return sink, pumps.start(r, sink, threading.Event()), w


def test_streams_are_read_whole_by_threads_kept_between_them() -> None:
    pumps = Pumps()
    try:
        for i in range(3):  # one after another: one thread
            sink, ended, w = _stream(pumps, b"x" * i)
            os.close(w)
            assert ended.wait(60), f"stream {i} not ended"
            assert (sink.data, sink.closed) == (b"x" * i, True), f"stream {i} = {sink.data!r}, closed {sink.closed}"
        assert len(_alive()) == 1, f"pump threads after 3 streams one after another = {len(_alive())}, want 1"
    finally:
        pumps.close()
    wait_for(lambda: not _alive(), "the pump threads to end after close")


def test_a_blocked_stream_holds_no_other() -> None:
    pumps = Pumps()
    go = threading.Event()
    try:
        stuck, stuck_ended, w1 = _stream(pumps, b"a", go)
        free, free_ended, w2 = _stream(pumps, b"b")
        os.close(w2)
        assert free_ended.wait(60) and free.data == b"b", "a stream waited for another's blocked sink"
        assert not stuck_ended.is_set()
        go.set()
        os.close(w1)
        assert stuck_ended.wait(60) and stuck.data == b"a"
    finally:
        go.set()
        pumps.close()
    wait_for(lambda: not _alive(), "the pump threads to end after close")


def test_at_most_idle_max_threads_wait_after_a_burst() -> None:
    pumps = Pumps()
    go = threading.Event()
    n = IDLE_MAX + 6
    try:
        streams = [_stream(pumps, b"y", go) for _ in range(n)]  # all busy at once: n threads
        assert len(_alive()) == n, f"pump threads of {n} streams at once = {len(_alive())}, want {n}"
        go.set()
        for _, _, w in streams:
            os.close(w)
        for i, (sink, ended, _) in enumerate(streams):
            assert ended.wait(60) and sink.data == b"y", f"stream {i} not read whole"
        wait_for(lambda: len(_alive()) == IDLE_MAX, f"the burst's pump threads to shrink to {IDLE_MAX}")
    finally:
        go.set()
        pumps.close()
    wait_for(lambda: not _alive(), "the pump threads to end after close")


def _switches(t: threading.Thread) -> int:
    """How often the thread gave up its CPU to wait (the kernel's count)."""
    with open(f"/proc/self/task/{t.native_id}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError(f"no voluntary_ctxt_switches in the status of thread {t.native_id}")


def test_a_stream_handed_over_wakes_no_thread_until_it_has_bytes() -> None:
    # The hand-off adds the pipe to the idle thread's epoll: the thread
    # sleeps on until the stream has bytes or ends, where a lock released
    # for it made it run as the request went, beside the server's work.
    pumps = Pumps()
    try:
        sink, ended, w = _stream(pumps, b"")
        os.close(w)
        assert ended.wait(60), "the first stream not ended"
        (t,) = _alive()
        wait_for(lambda: pumps._idle != [], "the thread back in the set")
        # Time for it to reach its wait (not a bound on speed).
        threading.Event().wait(0.2)
        r, w = os.pipe()
        before = _switches(t)
        ended = pumps.start(r, sink, threading.Event())
        # Time for a woken thread to run and wait again (not a bound on speed).
        threading.Event().wait(0.5)
        got = _switches(t) - before
        assert got == 0, f"waits of the idle thread over a hand-off of a stream with no bytes = {got}, want 0"
        os.write(w, b"z")
        os.close(w)
        assert ended.wait(60) and sink.data == b"z", f"the stream handed over = {sink.data!r}, want b'z'"
    finally:
        pumps.close()
    wait_for(lambda: not _alive(), "the pump threads to end after close")


def test_close_leaves_no_descriptor() -> None:
    # The threads' epolls and the set's wake pipe go with the last thread.
    before = set(os.listdir("/proc/self/fd"))
    pumps = Pumps()
    go = threading.Event()
    try:
        busy, busy_ended, w1 = _stream(pumps, b"a", go)
        idle, idle_ended, w2 = _stream(pumps, b"b")
        os.close(w2)
        assert idle_ended.wait(60), "the idle thread's stream not ended"
        pumps.close()  # one thread idle, one busy
        go.set()
        os.close(w1)
        assert busy_ended.wait(60) and busy.data == b"a", f"the busy stream = {busy.data!r}, want b'a'"
    finally:
        go.set()
        pumps.close()
    wait_for(lambda: not _alive(), "the pump threads to end after close")
    left = sorted(set(os.listdir("/proc/self/fd")) - before)
    assert left == [], f"descriptors left after close = {left}, want none"


def test_a_stream_after_close_is_pumped_alone() -> None:
    # A run started as its server closed still has its stream read whole,
    # by a thread that ends with it, and the closed set's pipe stays closed.
    before = set(os.listdir("/proc/self/fd"))
    pumps = Pumps()
    pumps.close()
    sink, ended, w = _stream(pumps, b"late")
    os.close(w)
    assert ended.wait(60) and (sink.data, sink.closed) == (b"late", True), f"stream after close = {sink.data!r}"
    wait_for(lambda: not _alive(), "the lone pump thread to end")
    left = sorted(set(os.listdir("/proc/self/fd")) - before)
    assert left == [], f"descriptors left after a stream after close = {left}, want none"
