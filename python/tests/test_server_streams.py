"""A served run's stdout and stderr end no later than its ``done`` reply
(issue 36): the server closes its copies of the request's descriptors
before it replies, so a client that has the reply has every byte of the
streams and their end at once, with no wait for the run's cleanup (which
follows the reply). Seen from a raw request on the server's connection,
with a tracker that looks at the pipes the moment the reply comes."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple

import scidex_jail
from conftest import new_id
from scidex_jail._server_run import Message, Tracker, request_fields


def _drain(fd: int) -> Tuple[bytes, bool]:
    """What the pipe holds now, and whether its end is reached, without
    waiting: a pipe whose write end is still open somewhere reads
    EAGAIN once empty; one closed everywhere reads b""."""
    os.set_blocking(fd, False)
    data = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return data, False
        if not chunk:
            return data, True
        data += chunk


class _AtDone(Tracker):
    """Drains the streams' pipes in the reader thread as it hands over the
    ``done`` reply, before anything else of the client runs."""

    def __init__(self, link: Any, reads: Dict[str, int]) -> None:
        super().__init__(link)
        self.reads = reads
        self.at_done: Optional[Dict[str, Tuple[bytes, bool]]] = None

    def on_reply(self, msg: Message) -> None:
        if msg.get("event") == "done":
            self.at_done = {name: _drain(fd) for name, fd in self.reads.items()}
        super().on_reply(msg)


def test_the_streams_end_no_later_than_the_done_reply(jail_server: scidex_jail.Server) -> None:
    prep = jail_server._prepare(["/bin/sh", "-c", "echo out; echo err >&2"], new_id("eof"), {})
    prep.close_sinks()  # the request below sends pipes of the test's own
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    tracker = _AtDone(jail_server, {"stdout": out_r, "stderr": err_r})
    try:
        try:
            jail_server.submit(tracker, request_fields(prep), [null, out_w, err_w])
        finally:
            for fd in (null, out_w, err_w):
                os.close(fd)  # the server holds the run's copies now
        with tracker.cond:
            assert tracker.cond.wait_for(tracker.ended, 120), "no reply in 120 s"
        assert tracker.reply is not None and tracker.reply.get("event") == "done", (tracker.reply, tracker.lost)
        assert tracker.reply["report"]["status"] == "ok", tracker.reply["report"].get("completion_notes")
        want = {"stdout": (b"out\n", True), "stderr": (b"err\n", True)}
        assert tracker.at_done == want, f"streams at the done reply = {tracker.at_done}, want {want} (True: at their end)"
    finally:
        os.close(out_r)
        os.close(err_r)
        prep.cleanup()
