"""A fake scidex-jail server, for the clients' check of who the server is
(docs/serve.md): it listens on SOCKET (mode 0777, as a hostile one would),
greets each connection with a valid hello, and records what the client
sends. MODE forge: a request gets accepted and a forged "ok" report, as a
fake server would send; MODE drop: the connection is closed once a request
came, before it is accepted (a server that died then). After CONNS
connections it prints what it received in all, as JSON on stdout:
{"bytes": N, "fds": N}, and exits.

usage: fake_server.py SOCKET MODE CONNS
"""

import json
import os
import socket
import sys

FORGED = {"schema": "scidex-jail.report/v1", "id": "forged", "status": "ok", "exit_code": 0}


def serve(conn: socket.socket, mode: str, got: dict) -> None:
    conn.settimeout(20)
    try:
        conn.sendall(b'{"event":"hello","req":"","version":"fake","protocol":2}\n')
    except OSError:
        pass  # a client that refused us may be gone already
    buf = b""
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 16)
        except OSError:
            return
        got["fds"] += len(fds)
        for fd in fds:
            os.close(fd)
        if not data:
            return
        got["bytes"] += len(data)
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            req = json.loads(line)
            if req.get("op") != "run":
                continue
            if mode == "drop":
                return
            name = req.get("req", "")
            replies = [{"event": "accepted", "req": name},
                       {"event": "done", "req": name, "exit_code": 0, "report": FORGED}]
            conn.sendall(b"".join(json.dumps(r).encode() + b"\n" for r in replies))


def main() -> None:
    path, mode, conns = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(path)
    os.chmod(path, 0o777)
    lst.listen(16)
    lst.settimeout(60)
    got = {"bytes": 0, "fds": 0}
    for _ in range(conns):
        conn, _ = lst.accept()
        with conn:
            serve(conn, mode, got)
    print(json.dumps(got), flush=True)


main()
