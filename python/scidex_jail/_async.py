"""The jail from an asyncio event loop (Jail.run_async)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any, Optional

from ._result import Result
from ._prepared import Prepared
from ._streams import Sink


async def _pump(reader: Optional[asyncio.StreamReader], sink: Optional[Sink]) -> None:
    if reader is None or sink is None:
        return
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            sink.feed(data)
    finally:
        sink.close()


async def _feed(writer: Optional[asyncio.StreamWriter], data: Optional[bytes]) -> None:
    if writer is None:
        return
    try:
        if data:
            writer.write(data)
            await writer.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the analysis did not read it all: its business
    finally:
        writer.close()


async def run_prepared(prep: Prepared) -> Result:
    """Run a prepared run from the event loop: what :meth:`Jail.run_async`
    does once the arguments are checked.

    Output callbacks are called from the event loop. Cancelling the task
    that awaits it cancels the run: SIGTERM to the jail (once the jail says
    it handles it, ``--ready-fd``: right after the start it would die of
    it with no report), then the task waits (shielded from further
    cancellation) until the jail has exited and cleaned up, and re-raises
    :class:`asyncio.CancelledError`.
    """
    assert prep.out is not None and prep.err is not None
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    ready_r, ready_w = os.pipe()

    def on_ready() -> None:
        # The byte, or the end of file of a jail that exited without it.
        loop.remove_reader(ready_r)
        os.close(ready_r)
        if not ready.done():
            ready.set_result(None)

    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *prep.command(ready_w),
                stdin=prep.stdin_child,
                stdout=prep.out.child,
                stderr=prep.err.child,
                close_fds=True,
                pass_fds=(ready_w,),
            )
        finally:
            os.close(ready_w)
    except BaseException:
        os.close(ready_r)
        prep.close_sinks()
        prep.cleanup()
        raise
    loop.add_reader(ready_r, on_ready)
    prep.started()

    async def until_exit() -> int:
        await asyncio.gather(
            _pump(proc.stdout, prep.out.sink if prep.out else None),
            _pump(proc.stderr, prep.err.sink if prep.err else None),
            _feed(proc.stdin, prep.stdin_data),
        )
        return await proc.wait()

    done = asyncio.ensure_future(until_exit())
    try:
        try:
            returncode = await asyncio.shield(done)
        except asyncio.CancelledError:
            either: set[asyncio.Future[Any]] = {ready, done}
            while not (ready.done() or done.done()):
                try:
                    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
                except asyncio.CancelledError:
                    continue
            if proc.returncode is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
            # The jail now stops the analysis and cleans up; wait for it
            # however often this task is cancelled again, then re-raise.
            while not done.done():
                try:
                    await asyncio.shield(done)
                except asyncio.CancelledError:
                    continue
                except Exception:
                    break
            raise
        return prep.finish(returncode)
    finally:
        if not ready.done():
            on_ready()
        prep.cleanup()
