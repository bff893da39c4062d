"""SQLite and flock in the run directory, from several processes.

Two writer processes insert rows concurrently, each transaction opened with
BEGIN IMMEDIATE (sqlite's RESERVED lock: a POSIX fcntl lock on the database
file); then one process holds an exclusive flock(2) while another must see
it busy. Lost locking shows as repeated counts or a failed integrity check.

    python3 sqlite_locks.py [JOURNAL_MODE]   # delete (default) or wal

writes results.db and flock.lock into the working directory.
"""
import errno
import fcntl
import multiprocessing as mp
import os
import sqlite3
import sys

DB = "results.db"
ROWS = 200


def writer(name, start):
    # BEGIN IMMEDIATE takes the RESERVED lock up front (a POSIX fcntl lock
    # on the database file), so two writers serialise instead of failing
    # with SQLITE_BUSY half-way through a transaction.
    con = sqlite3.connect(DB, timeout=30, isolation_level=None)
    start.wait()
    for i in range(ROWS):
        con.execute("BEGIN IMMEDIATE")
        n = con.execute("SELECT COUNT(*) FROM obs").fetchone()[0]
        con.execute("INSERT INTO obs(writer, seq, seen) VALUES (?, ?, ?)", (name, i, n))
        con.execute("COMMIT")
    con.close()


def holder(path, held, release):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    held.set()
    release.wait()
    os.close(fd)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "delete"
    con = sqlite3.connect(DB, isolation_level=None)
    print("journal:", con.execute(f"PRAGMA journal_mode={mode}").fetchone()[0])
    con.execute("CREATE TABLE obs(writer TEXT, seq INTEGER, seen INTEGER)")
    con.close()
    ctx = mp.get_context("fork")
    start = ctx.Event()
    ws = [ctx.Process(target=writer, args=(n, start)) for n in ("a", "b")]
    for w in ws:
        w.start()
    start.set()
    for w in ws:
        w.join()
    con = sqlite3.connect(DB)
    total, distinct = con.execute("SELECT COUNT(*), COUNT(DISTINCT seen) FROM obs").fetchone()
    # Each transaction saw the rows committed before it: with working locks
    # every count is distinct (0..2*ROWS-1); lost locking shows as repeats.
    print(f"rows: {total} distinct counts: {distinct} exit codes: {[w.exitcode for w in ws]}")
    print("integrity:", con.execute("PRAGMA integrity_check").fetchone()[0])
    con.close()

    held, release = ctx.Event(), ctx.Event()
    h = ctx.Process(target=holder, args=("flock.lock", held, release))
    h.start()
    held.wait()
    fd = os.open("flock.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("flock: not exclusive")
    except OSError as e:
        print("flock: busy" if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN) else f"flock: {e}")
    release.set()
    h.join()
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("flock: acquired after release")
    os.close(fd)


if __name__ == "__main__":
    main()
