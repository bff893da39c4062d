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
