"""The resident server stays live whatever its clients do (docs/serve.md,
"When a client stalls or dies"): a client killed with runs queued leaves
a server that still stops at once, with nothing left behind."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Iterator

import pytest

import scidex_jail
from conftest import _own_cgroup_dirs, leftovers, new_id, wait_for

CLIENT = """
import sys, time, scidex_jail
jail_bin, sock, tmp_root, prefix = sys.argv[1:]
s = scidex_jail.Server(jail_bin, socket=sock, tmp_root=tmp_root)
for i in range(60):
    s.start(["/bin/sh", "-c", "sleep 0.1"], analysis_id=f"{prefix}{i}")
print("queued", flush=True)
time.sleep(120)
"""


@pytest.fixture
def dirs() -> Iterator[tuple[str, str]]:
    """A tmp root the runs go to and a directory for the socket."""
    root, sockdir = tempfile.mkdtemp(prefix="sj-live-root-"), tempfile.mkdtemp(prefix="sj-live-sock-")
    os.chmod(root, 0o755)
    yield root, sockdir
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(sockdir, ignore_errors=True)


def test_a_client_killed_with_queued_runs_leaves_a_server_that_stops(jail_bin: str, dirs: tuple[str, str]) -> None:
    tmp_root, sockdir = dirs
    sock = os.path.join(sockdir, "s.sock")
    server = subprocess.Popen([jail_bin, "serve", "--socket", sock], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: os.path.exists(sock), "the server's socket", timeout=20)
        prefix = new_id("live")
        pkg = os.path.dirname(os.path.dirname(scidex_jail.__file__))
        client = subprocess.Popen([sys.executable, "-c", CLIENT, jail_bin, sock, tmp_root, prefix],
                                  stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": pkg})
        assert client.stdout is not None
        line = client.stdout.readline()
        client.kill()  # SIGKILL: its 60 runs mostly queued, their replies unread
        client.wait()
        assert line == "queued\n", f"the client said {line!r}, want queued (its 60 runs sent)"
        server.send_signal(signal.SIGTERM)
        try:
            # A failure detector, not a timing: before, the server never
            # ended (cancels blocked on full channels).
            _, err = server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail("the server did not end within 20 s of SIGTERM, its client killed with 60 runs queued")
        assert server.returncode == 0, err
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    left = [x for i in range(60) for x in leftovers(f"{prefix}{i}", None, tmp_root)]
    left += [d for c in _own_cgroup_dirs() for d in glob.glob(os.path.join(c, f"scidex-slot-{server.pid}-*"))]
    assert left == [] and os.listdir(tmp_root) == [], (left, os.listdir(tmp_root))
    assert not os.path.exists(sock), "the socket is still there"
    # Every run the client started was answered or, unanswerable, logged.
    assert "reply not delivered: request" in err, err
