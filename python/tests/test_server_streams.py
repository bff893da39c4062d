"""A served run's stdout and stderr (issue 36): they end no later than its
``done`` reply (the server closes its copies of the request's descriptors
before it replies, so a client that has the reply has every byte of the
streams and their end at once, with no wait for the run's cleanup, which
follows the reply: seen from a raw request on the server's connection,
with a tracker that looks at the pipes the moment the reply comes); and
the client pumps them from threads it keeps between runs, one stream at
a time each, ended with the Server."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from typing import Any, Dict, List, Optional, Set, Tuple

import scidex_jail
from conftest import new_id, wait_for
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


def _pumps() -> Set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "scidex-jail-pump"}


def test_runs_one_after_another_share_their_pump_threads() -> None:
    # A thread started per stream and per run cost each served run a
    # thread's start; the callbacks of runs one after another are called
    # from the threads the Server keeps, and closing it ends them.
    tmp_root = tempfile.mkdtemp(prefix="sj-pumps-")
    os.chmod(tmp_root, 0o755)
    callers: Dict[str, List[threading.Thread]] = {"out": [], "err": []}
    others = _pumps()  # a session's Server keeps its own
    try:
        with scidex_jail.Server(tmp_root=tmp_root) as server:
            for i in range(4):
                r = server.run(
                    ["/bin/sh", "-c", "echo out; echo err >&2"], analysis_id=new_id("pumps"),
                    stdout=lambda line: callers["out"].append(threading.current_thread()),
                    stderr=lambda line: callers["err"].append(threading.current_thread()),
                )  # fmt: skip
                assert r.status == "ok", r.completion_notes
            assert len(callers["out"]) == len(callers["err"]) == 4, callers
            # By object: an ended thread's ident may be a new one's.
            threads = {id(t): t.name for t in callers["out"] + callers["err"]}
            # One per stream: a run's wait returns once both are back.
            assert sorted(threads.values()) == ["scidex-jail-pump"] * 2, (
                f"threads of 4 runs' callbacks = {sorted(threads.values())}, want 2, each a scidex-jail-pump"
            )
        wait_for(lambda: not _pumps() - others, "the Server's pump threads to end after its close")
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)


def test_a_stuck_callback_holds_no_other_runs_stream(jail_server: scidex_jail.Server) -> None:
    # Each kept thread pumps one stream at a time: a run whose callback
    # blocks holds its own stream alone, never another run's.
    release = threading.Event()
    stuck = jail_server.start(
        ["/bin/sh", "-c", "echo a"], analysis_id=new_id("stuck"), stdout=lambda line: release.wait(120),
    )  # fmt: skip
    other: Dict[str, Any] = {}

    def run_other() -> None:
        other["result"] = jail_server.run(
            ["/bin/sh", "-c", "echo b; echo c >&2"], analysis_id=new_id("free"),
            stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE,
        )  # fmt: skip

    t = threading.Thread(target=run_other, daemon=True)
    try:
        t.start()
        t.join(120)
        assert not t.is_alive(), "a run waited for another run's stuck stdout callback"
        got = other["result"]
        assert (got.status, got.stdout, got.stderr) == ("ok", "b\n", "c\n"), (got.status, got.stdout, got.stderr)
    finally:
        release.set()
    assert stuck.wait(120).status == "ok"
