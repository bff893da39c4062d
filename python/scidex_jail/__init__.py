"""Run untrusted analyses in scidex-jail from Python.

The jail is a separate static binary (``scidex-jail``); this package builds
its command line (a list, never a shell string), runs it, reads the JSON
report it writes, and hands back a :class:`Result`. Standard library only;
:mod:`scidex_jail.post_process` alone needs psycopg 3, imported when used.

Run an analysis and look at what happened::

    import scidex_jail

    r = scidex_jail.run(
        ["/usr/bin/python3", "/srv/analyses/a42/script.py"],
        analysis_id="a42",
        ro=["/srv/analyses/a42"],        # readable inside, at the same path
        timeout=600, memory="2G",
        collect="/srv/outputs/a42",      # outputs copied here
        stdout=scidex_jail.CAPTURE,
    )
    r.status            # "ok", "timeout", "oom_killed", "pids_limit", ...
    r.completion_notes  # one sentence for the logs
    r.outputs           # (Output(path="results.csv", size=..., sha256=...), ...)

Long runs: :func:`start` returns a :class:`Run` with ``wait()``,
``cancel()`` and ``pid``; :func:`run_async` is the asyncio form, and
cancelling its task cancels the run. A KeyboardInterrupt during
:func:`run` cancels the run, waits for the jail to clean up, and
propagates.

The platform's runtime interface (``run_python_script`` returning a
``RuntimeResult``) is :mod:`scidex_jail.forge`; committing a run's outputs
to PostgreSQL is :func:`scidex_jail.post_process.commit_outputs`.

Errors: :class:`ValueError` for bad arguments (nothing started),
:class:`JailNotFoundError` for a missing binary, :class:`JailSetupError`
when the jail could not start the analysis (exit 125; ``stage`` and
``message`` say why), :class:`JailError` for a jail that wrote no report.
"""

from ._async import run_async
from ._errors import JailError, JailNotFoundError, JailSetupError
from ._options import BINARY_ENV, find_binary
from ._prepared import StdinArg
from ._result import KNOWN_STATUSES, Output, Result
from ._run import Run, run, start
from ._streams import CAPTURE, DEVNULL, Destination

__all__ = [
    "BINARY_ENV",
    "CAPTURE",
    "DEVNULL",
    "Destination",
    "KNOWN_STATUSES",
    "JailError",
    "JailNotFoundError",
    "JailSetupError",
    "Output",
    "Result",
    "Run",
    "StdinArg",
    "find_binary",
    "run",
    "run_async",
    "start",
]

__version__ = "0.1.0"
