"""run_async: the jail from an asyncio event loop."""

from __future__ import annotations

import asyncio
import signal
from typing import Mapping, Optional, Sequence

from ._options import DurationArg, PathArg, SizeArg, build_spec
from ._result import Result
from ._prepared import Prepared, StdinArg
from ._streams import Destination, Sink


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


async def run_async(
    argv: Sequence[str],
    *,
    analysis_id: str,
    profile: Optional[str] = None,
    timeout: Optional[DurationArg] = None,
    memory: Optional[SizeArg] = None,
    cpus: Optional[float] = None,
    pids: Optional[int] = None,
    disk: Optional[SizeArg] = None,
    net: Optional[str] = None,
    allow_tcp: Sequence[int] = (),
    root: Optional[PathArg] = None,
    ro: Sequence[PathArg] = (),
    rw: Sequence[PathArg] = (),
    inputs: Sequence[PathArg] = (),
    env: Optional[Mapping[str, str]] = None,
    collect: Optional[PathArg] = None,
    keep: bool = False,
    stdin: StdinArg = None,
    stdout: Destination = None,
    stderr: Destination = None,
    binary: Optional[PathArg] = None,
    grace: Optional[DurationArg] = None,
    config: Optional[PathArg] = None,
    tmp_root: Optional[PathArg] = None,
    cgroup_parent: Optional[PathArg] = None,
    unsafe_disable: Sequence[str] = (),
) -> Result:
    """:func:`scidex_jail.run` for asyncio: the same arguments and result.

    Output callbacks are called from the event loop. Cancelling the task
    that awaits it cancels the run: SIGTERM to the jail, then the task
    waits (shielded from further cancellation) until the jail has exited
    and cleaned up, and re-raises :class:`asyncio.CancelledError`.
    """
    spec = build_spec(
        argv, analysis_id=analysis_id, profile=profile, config=config, timeout=timeout, grace=grace,
        memory=memory, cpus=cpus, pids=pids, disk=disk, net=net, allow_tcp=allow_tcp, root=root,
        ro=ro, rw=rw, inputs=inputs, env=env, collect=collect, keep=keep, tmp_root=tmp_root,
        cgroup_parent=cgroup_parent, unsafe_disable=unsafe_disable, binary=binary,
    )  # fmt: skip
    prep = Prepared(spec, stdin, stdout, stderr)
    assert prep.out is not None and prep.err is not None
    try:
        proc = await asyncio.create_subprocess_exec(
            *prep.command(),
            stdin=prep.stdin_child,
            stdout=prep.out.child,
            stderr=prep.err.child,
            close_fds=True,
        )
    except BaseException:
        prep.close_sinks()
        prep.cleanup()
        raise
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
        prep.cleanup()
