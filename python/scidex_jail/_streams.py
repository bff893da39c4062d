"""Where the analysis' standard output and error go.

A destination is one of:

- ``None``: stdout is inherited from the caller (as with subprocess);
  stderr is passed through to the caller's standard error;
- :data:`CAPTURE` (also ``subprocess.PIPE``): kept in memory and returned
  as ``Result.stdout`` / ``Result.stderr``;
- :data:`DEVNULL` (also ``subprocess.DEVNULL``): discarded;
- a path (``str`` or ``os.PathLike``): the file is created or truncated
  and the output streams into it;
- a file object: written to it as it arrives (its descriptor is handed to
  the jail directly when it has one and it is stdout);
- a callable taking one ``str``: called with each line (newline included;
  a line longer than 64 KiB comes in pieces), as it arrives, from a
  background thread (or from the event loop in ``run_async``).

Only CAPTURE keeps output in memory, so a long run's logs can stream to a
file or a logger without piling up. The jail's own messages are on stderr;
the last few KiB of it are always kept (``JailError.stderr_tail``).
"""

from __future__ import annotations

import codecs
import io
import os
import subprocess
import sys
from typing import IO, Any, Callable, Optional, Union, cast

CAPTURE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL

#: See the module documentation.
Destination = Union[None, int, str, os.PathLike[str], IO[Any], Callable[[str], None]]

_LINE_MAX = 64 * 1024
_TAIL_MAX = 16 * 1024


class Sink:
    """Receives the bytes of one stream; ``close`` at end of stream."""

    def feed(self, data: bytes) -> None:
        """Take the next chunk."""

    def close(self) -> None:
        """End of stream: flush what is pending."""

    def text(self) -> Optional[str]:
        """The captured text, for CAPTURE; else None."""
        return None


class _Capture(Sink):
    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data

    def text(self) -> Optional[str]:
        return self._buf.decode("utf-8", "replace")


class _Fd(Sink):
    """Writes to a descriptor we do not own (the caller's stderr)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def feed(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._fd, view)
            except OSError:
                return  # the caller's stderr is gone: nothing to report to
            view = view[n:]


class _Writer(Sink):
    """Writes to a file object, text or binary; closes it only if we opened it."""

    def __init__(self, f: IO[Any], owned: bool) -> None:
        self._f = f
        self._owned = owned
        self._text = isinstance(f, io.TextIOBase)
        self._dec = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes) -> None:
        if self._text:
            self._f.write(self._dec.decode(data))
        else:
            self._f.write(data)
        self._f.flush()

    def close(self) -> None:
        if self._text:
            rest = self._dec.decode(b"", final=True)
            if rest:
                self._f.write(rest)
        try:
            self._f.flush()
        finally:
            if self._owned:
                self._f.close()


class _Lines(Sink):
    """Calls back with each line as text."""

    def __init__(self, callback: Callable[[str], None]) -> None:
        self._cb = callback
        self._dec = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""

    def feed(self, data: bytes) -> None:
        self._pending += self._dec.decode(data)
        while True:
            i = self._pending.find("\n")
            if i < 0:
                break
            line, self._pending = self._pending[: i + 1], self._pending[i + 1 :]
            self._cb(line)
        while len(self._pending) >= _LINE_MAX:
            chunk, self._pending = self._pending[:_LINE_MAX], self._pending[_LINE_MAX:]
            self._cb(chunk)

    def close(self) -> None:
        self._pending += self._dec.decode(b"", final=True)
        if self._pending:
            self._cb(self._pending)
            self._pending = ""


class Tail(Sink):
    """Keeps the last 16 KiB of a stream."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data
        if len(self._buf) > 2 * _TAIL_MAX:
            del self._buf[:-_TAIL_MAX]

    def text(self) -> Optional[str]:
        return bytes(self._buf[-_TAIL_MAX:]).decode("utf-8", "replace")


class Tee(Sink):
    """Feeds several sinks. A sink that raises (a callback's bug, a full
    disk) is dropped and its first error kept in ``error``, so the pipe is
    still drained and the jail never blocks on it; the caller raises the
    error once the run has ended."""

    def __init__(self, *sinks: Sink) -> None:
        self.sinks = sinks
        self._broken: set[int] = set()
        self.error: Optional[BaseException] = None

    def _each(self, op: Callable[[Sink], None]) -> None:
        for i, s in enumerate(self.sinks):
            if i in self._broken:
                continue
            try:
                op(s)
            except Exception as e:
                self._broken.add(i)
                if self.error is None:
                    self.error = e

    def feed(self, data: bytes) -> None:
        self._each(lambda s: s.feed(data))

    def close(self) -> None:
        self._each(lambda s: s.close())


class Plan:
    """How one stream is wired: what the child gets, and who reads the pipe.

    ``child`` is the Popen argument (None to inherit, an fd, or PIPE);
    ``sink`` reads the pipe when ``child`` is PIPE; ``owned`` is a file we
    opened for the child and close after the start.
    """

    def __init__(self, child: Optional[Union[int, IO[Any]]], sink: Optional[Sink], owned: Optional[IO[Any]] = None):
        self.child = child
        self.sink = sink
        self.owned = owned

    def error(self) -> Optional[BaseException]:
        """The first error a sink of this stream raised, if any."""
        return self.sink.error if isinstance(self.sink, Tee) else None

    def captured(self) -> Optional[str]:
        """The text of a CAPTURE sink, else None."""
        sinks = self.sink.sinks if isinstance(self.sink, Tee) else (self.sink,)
        for s in sinks:
            if isinstance(s, _Capture):
                return s.text()
        return None

    def close_owned(self) -> None:
        """Close the file opened for the child (after it has been started)."""
        if self.owned is not None:
            self.owned.close()
            self.owned = None


def check_destination(what: str, dest: Destination) -> None:
    """Raise ValueError for something that is not a destination."""
    if dest is None:
        return
    if isinstance(dest, bool):
        raise ValueError(f"{what}={dest!r}: give None, CAPTURE, DEVNULL, a path, a file object or a callable")
    if isinstance(dest, int):
        if dest < 0 and dest not in (CAPTURE, DEVNULL):
            raise ValueError(f"{what}={dest!r}: the only negative values are CAPTURE and DEVNULL")
        return
    if isinstance(dest, (str, os.PathLike)):
        p = os.fspath(dest)
        if not p or not isinstance(p, str):
            raise ValueError(f"{what}={dest!r}: give a non-empty text path")
        return
    if hasattr(dest, "write") or callable(dest):
        return
    raise ValueError(f"{what}={dest!r}: give None, CAPTURE, DEVNULL, a path, a file object or a callable")


def _real_fd(f: Any) -> Optional[int]:
    try:
        fd = f.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


def plan_stdout(dest: Destination) -> Plan:
    """Wire the analysis' stdout to ``dest``."""
    if dest is None:
        return Plan(None, None)
    if isinstance(dest, int) and not isinstance(dest, bool):
        if dest == CAPTURE:
            return Plan(subprocess.PIPE, Tee(_Capture()))
        return Plan(dest, None)  # DEVNULL or a descriptor
    if isinstance(dest, (str, os.PathLike)):
        out = open(dest, "wb")
        return Plan(out.fileno(), None, owned=out)
    if hasattr(dest, "write"):
        f = cast(IO[Any], dest)
        fd = _real_fd(f)
        if fd is not None:
            f.flush()
            return Plan(fd, None)
        return Plan(subprocess.PIPE, Tee(_Writer(f, owned=False)))
    return Plan(subprocess.PIPE, Tee(_Lines(cast(Callable[[str], None], dest))))


def plan_stderr(dest: Destination, tail: Tail) -> Plan:
    """Wire the analysis' (and the jail's) stderr to ``dest``, always through
    a pipe so that ``tail`` sees the jail's own messages. The jail is run
    with ``--summary=none`` (the report says how the run ended), so what
    reaches ``dest`` is the analysis' own bytes."""
    sink: Sink
    if dest is None:
        sys.stderr.flush()
        sink = _Fd(2)
    elif isinstance(dest, int) and not isinstance(dest, bool):
        if dest == CAPTURE:
            sink = _Capture()
        elif dest == DEVNULL:
            sink = Sink()
        else:
            sink = _Fd(dest)
    elif isinstance(dest, (str, os.PathLike)):
        sink = _Writer(open(dest, "wb"), owned=True)
    elif hasattr(dest, "write"):
        sink = _Writer(cast(IO[Any], dest), owned=False)
    else:
        sink = _Lines(cast(Callable[[str], None], dest))
    return Plan(subprocess.PIPE, Tee(sink, tail))
