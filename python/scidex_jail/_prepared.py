"""One run made ready: checked spec, report location, stream wiring, and
the reading of the jail's report into a Result or an error. Shared by the
blocking runner (_run) and the asyncio one (_async)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from typing import IO, Any, Dict, Optional, Union

from ._errors import JailError, JailSetupError
from ._options import Spec
from ._report import Report
from ._result import Result
from ._schema import validate_report
from ._streams import Destination, Plan, Tail, check_destination, plan_stderr, plan_stdout

#: What the analysis reads on stdin: None (``/dev/null``), bytes or str
#: (fed to it, then closed), a file object or a descriptor.
StdinArg = Union[None, bytes, str, int, IO[Any]]

#: The jail's exit status when it failed before the analysis ran.
EXIT_SETUP = 125


class Prepared:
    """One run, ready to start: its checked spec, a private directory for
    the report, and the wiring of its standard streams. Shared by the
    blocking and the asyncio runner."""

    def __init__(
        self,
        spec: Spec,
        stdin: StdinArg,
        stdout: Destination,
        stderr: Destination,
        *,
        validate: bool = False,
        report_file: bool = True,
    ) -> None:
        check_destination("stdout", stdout)
        check_destination("stderr", stderr)
        self.stdin_data: Optional[bytes] = None
        self.stdin_child: Any = subprocess.DEVNULL
        if isinstance(stdin, str):
            stdin = stdin.encode()
        if isinstance(stdin, (bytes, bytearray, memoryview)):
            self.stdin_data = bytes(stdin)
            self.stdin_child = subprocess.PIPE
        elif isinstance(stdin, bool):
            raise ValueError(f"stdin={stdin!r}: give None, bytes, str, a file object or a descriptor")
        elif isinstance(stdin, int):
            if stdin < 0 and stdin != subprocess.DEVNULL:
                raise ValueError(f"stdin={stdin!r}: give None, bytes, str, a file object or a descriptor")
            self.stdin_child = stdin
        elif stdin is not None:
            if not hasattr(stdin, "fileno"):
                raise ValueError(f"stdin={stdin!r}: a file object needs a real descriptor; pass its bytes instead")
            self.stdin_child = stdin
        self.spec = spec
        self.validate = validate
        # The report goes to a directory only this process can read; the
        # jail (the supervisor, as the caller's user) writes it there. A run
        # through ``scidex-jail serve`` gets it in the reply: no file.
        self.dir = tempfile.mkdtemp(prefix="scidex-jail-report-") if report_file else ""
        self.report_path = os.path.join(self.dir, "report.json") if report_file else ""
        self.tail = Tail()
        self.out: Optional[Plan] = None
        self.err: Optional[Plan] = None
        try:
            self.out = plan_stdout(stdout)
            self.err = plan_stderr(stderr, self.tail)
        except BaseException:
            self.close_sinks()
            self.cleanup()
            raise

    def command(self, ready_fd: Optional[int] = None) -> list[str]:
        """The jail's command line. It asks for no summary line
        (``--summary=none``): the report is read instead, and the
        analysis' stderr stays its own. With ``ready_fd``, the jail writes
        one byte to that inherited descriptor (and closes it) once a
        SIGTERM cancels the run with a report (``--ready-fd``): before,
        the signal would kill it by the default action, with no report."""
        cmd = self.spec.command(self.report_path)
        cmd.insert(cmd.index("--"), "--summary=none")
        if ready_fd is not None:
            cmd.insert(cmd.index("--"), f"--ready-fd={ready_fd}")  # the last of the jail's flags
        return cmd

    def started(self) -> None:
        """The child has its descriptors: close the files opened for it."""
        for p in (self.out, self.err):
            if p is not None:
                p.close_owned()

    def close_sinks(self) -> None:
        """End of the streams: flush and close what the sinks hold."""
        for p in (self.out, self.err):
            if p is not None:
                p.close_owned()
                if p.sink is not None:
                    p.sink.close()

    def finish(self, returncode: int) -> Result:
        """Read the report of a run that ended with ``returncode`` (the jail's
        own; negative when the jail itself died of a signal)."""
        self._raise_sink_error()
        return self.conclude(returncode, read_report(self.report_path))

    def _raise_sink_error(self) -> None:
        for plan in (self.out, self.err):
            err = plan.error() if plan is not None else None
            if err is not None:
                raise err

    def conclude(self, returncode: int, data: Optional[Dict[str, Any]]) -> Result:
        """The Result (or the error) of a run that ended with
        ``returncode`` and the report ``data`` (None: it wrote none)."""
        self._raise_sink_error()
        tail = self.tail.text() or ""
        if data is None:
            if returncode == EXIT_SETUP:
                raise JailSetupError("command line", jail_message(tail), stderr_tail=tail)
            raise JailError(
                f"scidex-jail {describe_exit(returncode)} and wrote no report; its stderr ends: {tail[-2000:]!r}",
                exit_code=returncode,
                stderr_tail=tail,
            )
        if self.validate:
            validate_report(data)
        report = Report.from_json(data)
        if returncode == EXIT_SETUP and report.status == "setup_error":
            setup = report.setup_error
            raise JailSetupError(
                setup.stage if setup else "unknown",
                (setup.message if setup else "") or report.completion_notes,
                stderr_tail=tail,
                report=report,
            )
        return Result.from_report(
            report,
            stdout=self.out.captured() if self.out else None,
            stderr=self.err.captured() if self.err else None,
        )

    def cleanup(self) -> None:
        """Remove the report's directory."""
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def read_report(path: str) -> Optional[Dict[str, Any]]:
    """The JSON object of the report file at ``path``; None when the jail
    wrote none."""
    try:
        with open(path, "rb") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise JailError(f"read the jail's report {path}: {e}") from e
    if not isinstance(data, dict):
        raise JailError(f"the jail's report {path} is not a JSON object")
    return data


def jail_message(stderr_tail: str) -> str:
    """The jail's own message from its stderr: its last ``scidex-jail:`` line."""
    lines = [ln for ln in stderr_tail.splitlines() if ln.startswith("scidex-jail: ")]
    if lines:
        return lines[-1][len("scidex-jail: ") :]
    return stderr_tail.strip() or "(no message on stderr)"


#: The jail's exit status when the analysis ended but its outputs or report
#: could not be delivered (status ``delivery_failed``).
EXIT_DELIVERY_FAILED = 122
#: The jail's exit status when what the analysis left went over an output
#: budget (status ``output_limit``).
EXIT_OUTPUT_LIMIT = 123
#: ``run --server``'s exit status when the server accepted the run and went
#: away before its reply (:class:`RunLostError`): the run may have started.
EXIT_LOST = 121


def describe_exit(returncode: int) -> str:
    """'exited 3' or 'was killed by SIGKILL'."""
    if returncode == EXIT_DELIVERY_FAILED:
        return f"exited {returncode} (it could not deliver the run's outputs or report)"
    if returncode == EXIT_OUTPUT_LIMIT:
        return f"exited {returncode} (what the analysis left went over an output budget)"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited {returncode}"
