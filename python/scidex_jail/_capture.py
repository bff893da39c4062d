"""A bounded capture of one stream: the head up to a limit, the last few
KiB, and the count of what fell between.

forge captures an analysis' stdout and stderr into one of these by default
(``capture_limit``), so what the platform process holds of a run's output
is bounded whatever the analysis prints (issue 33: a 400 MB printer took
the platform process to 823 MiB). The jail bounds its own pipes too (the
report's ``streams``); this is the trusted process' own bound, for every
jail version and for the resident server alike.

It is handed to the runner as a binary file object without a descriptor,
so the runner pumps the pipe into :meth:`write` from its own thread.
"""

from __future__ import annotations

#: How much of a stream's end is kept apart from its head (the report's
#: ``streams`` tail is the same size).
TAIL_BYTES = 4096


class BoundedCapture:
    """Keeps the first ``limit`` bytes written and the last
    :data:`TAIL_BYTES`; counts every byte (``total``) and those in neither
    (``dropped``)."""

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"capture_limit {limit!r}: give a non-negative number of bytes, or None for no bound")
        self.limit = limit
        self.total = 0
        self._head = bytearray()
        # Bytes past the head, at most 2 * TAIL_BYTES of them, cut to the
        # last TAIL_BYTES when read; trimmed in place as they come.
        self._rest = bytearray()

    def write(self, data: bytes) -> int:
        n = len(data)
        self.total += n
        room = self.limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._rest += data[-2 * TAIL_BYTES :]
            if len(self._rest) > 2 * TAIL_BYTES:
                del self._rest[: -TAIL_BYTES]
        return n

    def flush(self) -> None:
        """Nothing buffered: a file object's method the runner calls."""

    @property
    def dropped(self) -> int:
        """Bytes kept in neither the head nor the tail."""
        return max(0, self.total - len(self._head) - TAIL_BYTES)

    def tail(self) -> str:
        """The stream's last :data:`TAIL_BYTES` bytes as text (UTF-8,
        undecodable bytes replaced)."""
        rest = bytes(self._rest[-TAIL_BYTES:])
        # The head's end makes up what the rest lacks: all of the head, at
        # most (a negative start would count from the end).
        keep = TAIL_BYTES - len(rest)
        end = bytes(self._head[max(0, len(self._head) - keep) :]) if keep > 0 else b""
        return (end + rest).decode("utf-8", "replace")

    def text(self) -> str:
        """What is kept, as text: the whole stream when it fit; else its
        head, a line saying how many bytes were dropped, and its tail."""
        if not self._rest:
            return self._head.decode("utf-8", "replace")
        rest = bytes(self._rest[-TAIL_BYTES:])
        dropped = self.total - len(self._head) - len(rest)
        if dropped == 0:
            return (bytes(self._head) + rest).decode("utf-8", "replace")
        return (
            self._head.decode("utf-8", "replace")
            + f"\n[scidex-jail forge: {dropped} bytes dropped here (capture_limit {self.limit}); the last {len(rest)} follow]\n"
            + rest.decode("utf-8", "replace")
        )

