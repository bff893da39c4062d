"""Where commit_outputs puts an output too large to hold in the database.

Files up to ``inline_limit`` go into the database as ``bytea``. A larger
one is handed to the platform's ``store`` hook, which keeps it somewhere
that outlives the collect directory (an object store, a content-addressed
share) and returns a URI, recorded as ``stored_at``. Without a hook such a
file is refused: earlier versions recorded the collected file's host path,
which is only as durable as that directory (issue 33).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from typing import BinaryIO, Callable


@dataclass(frozen=True)
class StoredFile:
    """One verified output handed to a ``store`` hook: its ``path`` in the
    run directory, ``size``, ``sha256`` and ``media_type`` as the database
    records them, ``run_status`` (a hook may keep a failed run's files
    apart), and ``file``, the collected file opened for reading at its
    start (opened without following links; read it, do not close it). The
    hook returns the URI it is kept under; the same file given twice (the
    same sha256) may get the same URI: a commit that is retried calls the
    hook again before it finds the run already there."""

    path: str
    size: int
    sha256: str
    media_type: str
    run_status: str
    file: BinaryIO


#: The hook's type: a :class:`StoredFile` in, a URI out.
StoreHook = Callable[[StoredFile], str]


class StoreError(Exception):
    """The store hook could not keep a file (its sha256 did not match)."""


def store_in(directory: str) -> StoreHook:
    """A ``store`` hook that keeps each file under ``directory`` by its
    sha256 (``<directory>/<first two hex digits>/<sha256>``, written
    under a temporary name, synced and renamed into place, so a reader
    never sees half a file) and returns its ``file://`` URI. The bytes are
    hashed as they are copied and a mismatch is refused. For a platform
    whose outputs live on a shared file system; an object store's hook is
    the same shape."""
    root = os.path.abspath(directory)

    def store(f: StoredFile) -> str:
        sub = os.path.join(root, f.sha256[:2])
        os.makedirs(sub, exist_ok=True)
        final = os.path.join(sub, f.sha256)
        if os.path.isfile(final) and os.path.getsize(final) == f.size:
            return "file://" + final
        fd, tmp = tempfile.mkstemp(prefix=".part-", dir=sub)
        try:
            h = hashlib.sha256()
            with os.fdopen(fd, "wb") as out:
                while block := f.file.read(1 << 16):
                    h.update(block)
                    out.write(block)
                out.flush()
                os.fsync(out.fileno())
            if h.hexdigest() != f.sha256:
                raise StoreError(f"output {f.path!r} changed while it was stored: sha256 {h.hexdigest()}, verified {f.sha256}")
            os.replace(tmp, final)
        except BaseException:
            os.unlink(tmp)
            raise
        return "file://" + final

    return store
