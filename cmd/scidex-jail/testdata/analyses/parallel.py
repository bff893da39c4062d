"""A multiprocessing workload: pools under every start method, a queue and
a lock shared by spawned processes, and shared memory.

What it needs from the jail: a writable /dev/shm (POSIX semaphores behind
every Lock, shared_memory segments), AF_UNIX sockets (the forkserver
listens on one in $TMPDIR, the run directory), pipes, and fork/clone under
the PID limit.

    python3 parallel.py [WORKERS]

prints one line per check; a pool of WORKERS (default 2) processes.
"""
import multiprocessing as mp
import sys
from multiprocessing import shared_memory


def work(n):
    # A little real computation per task, with a result the parent checks.
    return sum(i * i for i in range(n))


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    want = [work(n) for n in range(200, 216)]
    for method in ("fork", "spawn", "forkserver"):
        with mp.get_context(method).Pool(workers) as pool:
            got = pool.map(work, range(200, 216))
        print(f"{method}: {'ok' if got == want else 'MISMATCH'}")
    # Semaphores live in /dev/shm (sem_open); queues use pipes and a lock.
    ctx = mp.get_context("spawn")
    q, lock = ctx.Queue(), ctx.Lock()
    procs = [ctx.Process(target=put, args=(q, lock, i)) for i in range(2)]
    for p in procs:
        p.start()
    got = sorted(q.get() for _ in procs)
    for p in procs:
        p.join()
    print(f"queue: {got}")
    shm = shared_memory.SharedMemory(create=True, size=4096)
    try:
        shm.buf[:5] = b"hello"
        with mp.get_context("fork").Pool(1) as pool:
            print(f"shared_memory: {pool.apply(read_shm, (shm.name,))}")
    finally:
        shm.close()
        shm.unlink()


def put(q, lock, i):
    with lock:
        q.put(i * 10)


def read_shm(name):
    s = shared_memory.SharedMemory(name=name)
    try:
        return bytes(s.buf[:5]).decode()
    finally:
        s.close()


if __name__ == "__main__":
    main()
