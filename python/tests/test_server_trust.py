"""scidex_jail.Server and who it talks to (docs/serve.md, "Trust both
ways"): a server of another account is refused before anything is sent
to it; a refused connection and a server gone before or after it
accepted a run each say what is known, with an error of their own."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from typing import Any, Callable, Dict, Iterator, Tuple

import pytest

import scidex_jail
from conftest import PYTHON, REPO, new_id, wait_for

FAKE = os.path.join(REPO, "cmd", "scidex-jail", "testdata", "fake_server.py")


@pytest.fixture
def fake_server() -> Iterator[Callable[[bool, str], Tuple[str, Callable[[], Dict[str, Any]]]]]:
    """Starts testdata/fake_server.py (a server that greets with a valid
    hello and records what it is sent) for one connection, on a socket in
    a shared (1777) directory, as nobody or as this process; returns the
    socket and a function that waits for the fake's end and returns what
    it received."""
    made: list[Tuple[str, subprocess.Popen[bytes]]] = []

    def start(as_nobody: bool, mode: str) -> Tuple[str, Callable[[], Dict[str, Any]]]:
        d = tempfile.mkdtemp(prefix="sj-shared-")
        os.chmod(d, 0o1777)
        script = os.path.join(d, "fake_server.py")
        shutil.copyfile(FAKE, script)  # one the other account can read
        os.chmod(script, 0o644)
        path = os.path.join(d, "jail.sock")
        argv = [PYTHON, script, path, mode, "1"]
        if as_nobody:
            argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        made.append((d, proc))
        wait_for(lambda: os.path.exists(path) or proc.poll() is not None, "the fake server's socket")

        def received() -> Dict[str, Any]:
            out, err = proc.communicate(timeout=30)
            assert proc.returncode == 0, err
            got: Dict[str, Any] = json.loads(out)
            return got

        return path, received

    yield start
    for d, proc in made:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
        shutil.rmtree(d, ignore_errors=True)


def test_a_server_of_another_user_is_refused(fake_server: Any) -> None:
    path, received = fake_server(True, "forge")
    with pytest.raises(scidex_jail.JailError, match=f"{path} runs as uid 65534 \\(nobody\\).*nothing was sent"):
        with scidex_jail.Server(socket=path) as s:
            s.run(["/bin/true"], analysis_id=new_id("srvfake"))
    assert received() == {"bytes": 0, "fds": 0}


def test_a_server_gone_before_accepting_never_started_the_run(fake_server: Any) -> None:
    path, received = fake_server(False, "drop")  # this process' uid: trusted
    with scidex_jail.Server(socket=path) as s:
        with pytest.raises(scidex_jail.JailError, match="before it accepted the run: the run never started") as e:
            s.run(["/bin/true"], analysis_id=new_id("srvdrop"))
    assert not isinstance(e.value, scidex_jail.RunLostError) and e.value.exit_code == 125, e.value
    got = received()
    assert got["fds"] == 3 and got["bytes"] > 0, got


def test_a_refused_connection_says_why(jail_bin: str) -> None:
    d = tempfile.mkdtemp(prefix="sj-serve-sock-")
    path = os.path.join(d, "serve.sock")
    proc = subprocess.Popen([jail_bin, "serve", "--socket", path, "--slots", "0"], stderr=subprocess.PIPE)
    held: list[socket.socket] = []
    try:
        wait_for(lambda: os.path.exists(path) or proc.poll() is not None, "the server's socket")
        for _ in range(64):  # the most clients a server takes
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            held.append(c)
            c.connect(path)
            assert b'"hello"' in c.recv(4096)
        with pytest.raises(scidex_jail.ServerRefusedError, match="refused: 64 clients connected.*try again later") as e:
            scidex_jail.Server(socket=path)
        assert e.value.reason == "too_many_clients", e.value
    finally:
        for c in held:
            c.close()
        proc.terminate()
        proc.communicate(timeout=60)
        shutil.rmtree(d, ignore_errors=True)
