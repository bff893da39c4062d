"""Run untrusted analyses in scidex-jail from Python.

The jail is a separate static binary (``scidex-jail``); this package builds
its command line (a list, never a shell string), runs it, reads the JSON
report it writes, and hands back a :class:`Result` holding the typed
:class:`Report`. Standard library only at import: :func:`validate_report`
needs the ``jsonschema`` library and :mod:`scidex_jail.post_process`
psycopg 3, each imported when used.

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
    r.report.limits.memory_bytes, r.report.usage.cgroup, r.report.phases  # typed
    r.report.raw        # the JSON object as the jail wrote it

A deployment's shared settings go in a client, whose ``run``, ``start`` and
``run_async`` take the per-run arguments (the module functions are a client
made per call)::

    jail = scidex_jail.Jail(binary="/usr/bin/scidex-jail", tmp_root="/srv/runs")
    r = jail.run(["/usr/bin/true"], analysis_id="a43")

The report's JSON Schema ships in the package (:func:`schema_text`, the file
``report.schema.json``, which ``scidex-jail schema`` also prints);
:func:`validate_report` checks a report against it with the ``jsonschema``
library when installed, and ``Jail(validate=True)`` does so for every run.

Long runs: :meth:`Jail.start` (:func:`start`) returns a :class:`Run` with ``wait()``,
``cancel()`` and ``pid``; :func:`run_async` is the asyncio form, and
cancelling its task cancels the run. A KeyboardInterrupt during
:func:`run` cancels the run, waits for the jail to clean up, and
propagates.

Many runs: :class:`Server` keeps ``scidex-jail serve`` resident (its
child, or one listening on a unix socket) and runs analyses through it
with the same arguments, results and errors (``server.run``,
``server.start``, ``server.run_async``); the server prepares what a run
needs ahead of the request.

The platform's runtime interface (``run_python_script`` returning a
``RuntimeResult``) is :mod:`scidex_jail.forge`; committing a run's outputs
to PostgreSQL is :func:`scidex_jail.post_process.commit_outputs`.

Errors: :class:`ValueError` for bad arguments (nothing started; a limit
the jail refuses is a :class:`LimitError`, a ValueError and a
:class:`JailSetupError` with the jail's own message, checked by the
binary's ``profiles --schema``),
:class:`JailNotFoundError` for a missing binary, :class:`JailSetupError`
when the jail could not start the analysis (exit 125; ``stage`` and
``message`` say why), :class:`JailError` for a jail that wrote no report; through a
:class:`Server`, :class:`ServerRefusedError` for a run or a connection
the server refused (try again later) and :class:`RunLostError` for a run
the server accepted and then went away without answering.
"""

from ._client import Jail, run, run_async, start
from ._errors import BadRequestError, JailError, JailNotFoundError, JailSetupError, RunLostError, ServerRefusedError
from ._limits import LimitError
from ._options import BINARY_ENV, find_binary
from ._prepared import StdinArg
from ._enforced import Cgroup, CgroupUsage, Enforced, HostGroup, Identity, Landlock, Mounts, Seccomp
from ._report import (
    KNOWN_STATUSES,
    REPORT_SCHEMA,
    Limits,
    Output,
    Phase,
    Report,
    Served,
    SetupError,
    Stream,
    Streams,
    Usage,
)
from ._egress import Egress, EgressConnection, EgressLookup, EgressTotals
from ._schema import ReportSchemaError, report_schema, schema_text, validate_report
from ._result import Result
from ._run import Run
from ._server import Server
from ._server_run import ServerRun
from ._streams import CAPTURE, DEVNULL, Destination

__all__ = [
    "BINARY_ENV",
    "CAPTURE",
    "DEVNULL",
    "Cgroup",
    "CgroupUsage",
    "Destination",
    "Egress",
    "EgressConnection",
    "EgressLookup",
    "EgressTotals",
    "Enforced",
    "HostGroup",
    "Identity",
    "KNOWN_STATUSES",
    "Jail",
    "JailError",
    "JailNotFoundError",
    "JailSetupError",
    "LimitError",
    "Landlock",
    "Limits",
    "Mounts",
    "Output",
    "Phase",
    "REPORT_SCHEMA",
    "Report",
    "ReportSchemaError",
    "Result",
    "Run",
    "RunLostError",
    "Seccomp",
    "Server",
    "ServerRefusedError",
    "BadRequestError",
    "ServerRun",
    "Served",
    "SetupError",
    "StdinArg",
    "Stream",
    "Streams",
    "Usage",
    "find_binary",
    "report_schema",
    "run",
    "run_async",
    "schema_text",
    "start",
    "validate_report",
]

__version__ = "0.1.0"
