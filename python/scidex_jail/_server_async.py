"""One run through ``scidex-jail serve`` from an asyncio event loop
(:meth:`Server.run_async`)."""

from __future__ import annotations

import asyncio
import os
from typing import Any, List, Tuple

from ._prepared import Prepared
from ._result import Result
from ._server_run import EOF_GRACE, Tracker, start_feed, submit_run, outcome
from ._streams import Sink


class _AsyncTracker(Tracker):
    def __init__(self, link: Any, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(link)
        self._loop = loop
        self.wake = asyncio.Event()

    def changed(self) -> None:
        try:
            self._loop.call_soon_threadsafe(self.wake.set)
        except RuntimeError:
            pass  # the loop is closed: nobody waits


async def run_async_on(link: Any, prep: Prepared) -> Result:
    """Run a prepared run through the server from the event loop: the
    semantics of :func:`scidex_jail.run_async` (output callbacks from the
    loop; cancelling the task cancels the run, waits, shielded, for its
    end, and re-raises :class:`asyncio.CancelledError`)."""
    loop = asyncio.get_running_loop()
    tracker = _AsyncTracker(link, loop)
    stdio = submit_run(link, tracker, prep)
    reads: List[Tuple[int, Sink, "asyncio.Future[None]"]] = []

    def readable(fd: int, sink: Sink, eof: "asyncio.Future[None]") -> None:
        try:
            data = os.read(fd, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            sink.feed(data)
        else:
            loop.remove_reader(fd)
            eof.set_result(None)

    def close_streams() -> None:
        while reads:
            fd, sink, eof = reads.pop()
            if not eof.done():
                loop.remove_reader(fd)
                while True:  # what is buffered, then stop
                    try:
                        data = os.read(fd, 65536)
                    except (BlockingIOError, OSError):
                        break
                    if not data:
                        break
                    sink.feed(data)
            os.close(fd)
            sink.close()

    async def until_ended() -> None:
        while True:
            with tracker.cond:
                if tracker.ended():
                    return
                tracker.wake.clear()
            await tracker.wake.wait()

    try:
        for fd, sink in stdio.reads:
            os.set_blocking(fd, False)
            eof = loop.create_future()
            reads.append((fd, sink, eof))
            loop.add_reader(fd, readable, fd, sink, eof)
        stdio.reads = []
        if stdio.stdin_w is not None:
            w, stdio.stdin_w = stdio.stdin_w, None
            start_feed(w, prep.stdin_data or b"")
        ended = asyncio.ensure_future(until_ended())
        try:
            await asyncio.shield(ended)
        except asyncio.CancelledError:
            tracker.cancel()
            while not ended.done():
                try:
                    await asyncio.shield(ended)
                except asyncio.CancelledError:
                    continue
            raise
        eofs = [eof for _, _, eof in reads]
        if eofs:
            await asyncio.wait(eofs, timeout=EOF_GRACE)
        close_streams()
        if tracker.lost is not None:
            raise tracker.lost
        assert tracker.reply is not None
        return outcome(prep, tracker.reply, tracker.cancelled)
    finally:
        stdio.close_all()
        close_streams()
        prep.cleanup()
