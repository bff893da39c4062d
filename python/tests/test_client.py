"""The client (Jail), the module functions as its default, and forge's
script argument, through a stand-in binary that records its command line
and writes a real report (tests/reports/). Pure: no root, no jail, no
database (``make unit``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any, Dict, List

import pytest

import scidex_jail
from scidex_jail import CAPTURE, Jail, JailNotFoundError, JailSetupError, Report, Result, forge

from conftest import write

pytestmark = pytest.mark.unit

REPORTS = os.path.join(os.path.dirname(__file__), "reports")


@dataclass
class Fake:
    """A stand-in scidex-jail: writes ``report`` where --report= says,
    records its arguments one per line in ``args_file``, exits ``code``."""

    binary: str
    args_file: str

    def args(self) -> List[str]:
        with open(self.args_file) as f:
            return f.read().splitlines()


def fake_jail(directory: str, report: str = "ok", code: int = 0) -> Fake:
    """``report``: a sample's name in tests/reports/, or a file's path."""
    src = report if os.path.isabs(report) else os.path.join(REPORTS, f"{report}.json")
    args = os.path.join(directory, "args")
    binary = os.path.join(directory, "scidex-jail")
    with open(binary, "w") as f:
        f.write(
            "#!/bin/sh\n"
            f"printf '%s\\n' \"$@\" > '{args}'\n"
            'for a; do case $a in --report=*) rep=${a#--report=};; esac; done\n'
            f"cp '{src}' \"$rep\"\n"
            f"exit {code}\n"
        )
    os.chmod(binary, 0o755)
    return Fake(binary, args)


@pytest.fixture
def fake(tmp_path: Any) -> Fake:
    return fake_jail(str(tmp_path))


def test_client_holds_the_deployment_settings(fake: Fake, tmp_path: Any) -> None:
    cfg = tmp_path / "profiles.json"
    cfg.write_text("{}")
    jail = Jail(binary=fake.binary, config=cfg, tmp_root=tmp_path, cgroup_parent="/sys/fs/cgroup/x")
    r = jail.run(["/bin/true", "-x"], analysis_id="u1", memory="1G", timeout=90, stdout=CAPTURE)
    # The descriptor the jail says it handles signals on (the pipe's number).
    ready = fake.args()[-4]
    assert ready.startswith("--ready-fd=") and ready[len("--ready-fd="):].isdigit(), fake.args()
    assert fake.args() == [
        "run", "--id=u1", f"--report={fake.args()[2][len('--report='):]}", f"--config={cfg}", "--timeout=90s",
        "--memory=1G", f"--tmp-root={tmp_path}", "--cgroup-parent=/sys/fs/cgroup/x", "--summary=none", ready, "--", "/bin/true", "-x",
    ]  # fmt: skip
    assert isinstance(r, Result) and isinstance(r.report, Report) and r.stdout == ""
    with open(os.path.join(REPORTS, "ok.json")) as f:
        assert r.report.raw == json.load(f)
    assert (r.status, r.limits.profile, r.report.enforced.net) == ("ok", "default", "none")


def test_module_functions_are_a_default_client(fake: Fake, tmp_path: Any) -> None:
    scidex_jail.run(["/bin/true"], analysis_id="u2", pids=8, binary=fake.binary, tmp_root=tmp_path)
    module = fake.args()
    Jail(binary=fake.binary, tmp_root=tmp_path).run(["/bin/true"], analysis_id="u2", pids=8)
    client = fake.args()
    # The report's path and the ready pipe's descriptor number are the run's own.
    own = ("--report=", "--ready-fd=")
    assert [a for a in module if not a.startswith(own)] == [a for a in client if not a.startswith(own)]
    assert "--pids=8" in client and f"--tmp-root={tmp_path}" in client


def test_start_and_run_async(fake: Fake) -> None:
    jail = Jail(binary=fake.binary)
    with jail.start(["/bin/true"], analysis_id="u3") as run:
        assert run.analysis_id == "u3" and run.wait().status == "ok"
    r = asyncio.run(jail.run_async(["/bin/true"], analysis_id="u4", env={"A": "1"}))
    assert r.status == "ok" and "--env=A=1" in fake.args()
    assert asyncio.run(scidex_jail.run_async(["/bin/true"], analysis_id="u5", binary=fake.binary)).ok


def _slow_to_listen(directory: str) -> tuple[str, str]:
    """A stand-in jail that takes 0.3 s before it writes the --ready-fd
    byte and logs, in order, "ready" and any SIGTERM it gets."""
    log = os.path.join(directory, "log")
    binary = os.path.join(directory, "slow-jail")
    with open(binary, "w") as f:
        f.write(
            "#!/bin/bash\n"  # dash takes one-digit descriptors only
            f"trap 'echo term >> {log}; exit 143' TERM\n"
            'for a; do case $a in --ready-fd=*) fd=${a#--ready-fd=};; esac; done\n'
            "sleep 0.3\n"
            f"echo ready >> {log}\n"
            'eval "printf r >&$fd; exec $fd>&-"\n'
            "sleep 5 </dev/null >/dev/null 2>&1 & wait\n"
        )
    os.chmod(binary, 0o755)
    return binary, log


def test_a_cancel_waits_until_the_jail_listens(tmp_path: Any) -> None:
    # A cancel right after the start is held until the jail's ready byte:
    # the stand-in must log "ready" before "term", in the blocking and in
    # the asyncio runner alike.
    binary, log = _slow_to_listen(str(tmp_path))
    run = Jail(binary=binary).start(["/bin/true"], analysis_id="u9")
    run.cancel()
    with pytest.raises(scidex_jail.JailError):
        run.wait()  # the stand-in writes no report
    with open(log) as f:
        assert f.read().split() == ["ready", "term"]
    os.remove(log)

    async def main() -> None:
        task = asyncio.ensure_future(Jail(binary=binary).run_async(["/bin/true"], analysis_id="u10"))
        await asyncio.sleep(0.1)  # started, and still 0.2 s from its byte
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    with open(log) as f:
        assert f.read().split() == ["ready", "term"]


def test_setup_error_carries_the_typed_report(tmp_path: Any) -> None:
    fake = fake_jail(str(tmp_path), "setup_error_cgroup", code=125)
    with pytest.raises(JailSetupError, match="stage 'cgroup'") as e:
        Jail(binary=fake.binary).run(["/bin/true"], analysis_id="u6")
    assert isinstance(e.value.report, Report) and e.value.report["status"] == "setup_error"


def test_validate_checks_each_report(tmp_path: Any) -> None:
    with open(os.path.join(REPORTS, "ok.json")) as f:
        broken = json.load(f)
    broken["status"] = "fine"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(broken))
    fake = fake_jail(str(tmp_path), str(bad))
    with pytest.raises(scidex_jail.ReportSchemaError, match="at /status"):
        Jail(binary=fake.binary, validate=True).run(["/bin/true"], analysis_id="u7")
    # Without validate the report is read as it is (leniently typed).
    assert Result.from_report(broken).status == "fine"


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"binary": 3}, "binary"),
        ({"config": ""}, "config"),
        ({"tmp_root": b"/tmp"}, "tmp_root"),
        ({"validate": "yes"}, "validate"),
    ],
)
def test_client_checks_its_settings(kwargs: Dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        Jail(**kwargs)


def test_bad_run_arguments_start_nothing(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_popen(*a: object, **k: object) -> None:
        raise AssertionError("a process was started for bad arguments")

    monkeypatch.setattr(subprocess, "Popen", no_popen)
    jail = Jail(binary=fake.binary)
    for kwargs, needle in (({"memory": "lots"}, "memory"), ({"net": ""}, "net"), ({"ro": "/etc"}, "sequence")):
        with pytest.raises(ValueError, match=needle):
            jail.run(["/bin/true"], analysis_id="u8", **kwargs)
    with pytest.raises(ValueError, match="one string"):
        jail.start("/bin/true -x", analysis_id="u8")  # type: ignore[arg-type]
    with pytest.raises(JailNotFoundError):
        Jail(binary="/nonexistent/scidex-jail").run(["/bin/true"], analysis_id="u8")


def test_unknown_keywords_are_refused(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    # The options are a TypedDict as **options: nothing checks them at run
    # time but the package, which must refuse a misspelt one as Python does.
    def no_popen(*a: object, **k: object) -> None:
        raise AssertionError("a process was started for an unknown keyword")

    monkeypatch.setattr(subprocess, "Popen", no_popen)
    jail = Jail(binary=fake.binary)
    bad: Dict[str, Any] = {"timout": 3}
    calls = (
        lambda: jail.run(["/bin/true"], analysis_id="u9", **bad),
        lambda: jail.start(["/bin/true"], analysis_id="u9", **bad),
        lambda: asyncio.run(jail.run_async(["/bin/true"], analysis_id="u9", **bad)),
        lambda: scidex_jail.run(["/bin/true"], analysis_id="u9", binary=fake.binary, **bad),
        lambda: scidex_jail.start(["/bin/true"], analysis_id="u9", binary=fake.binary, **bad),
        lambda: asyncio.run(scidex_jail.run_async(["/bin/true"], analysis_id="u9", binary=fake.binary, **bad)),
    )
    for call in calls:
        with pytest.raises(TypeError, match=r"'timout'.*known ones are analysis_id, .*timeout"):
            call()
    # A client's settings are the client's, not a run's.
    jail_setting: Dict[str, Any] = {"binary": fake.binary}
    with pytest.raises(TypeError, match="'binary'"):
        jail.run(["/bin/true"], analysis_id="u9", **jail_setting)


def test_forge_takes_a_path_or_source_never_guessing(fake: Fake, work: str) -> None:
    jail = Jail(binary=fake.binary)
    with pytest.raises(ValueError, match="source="):
        forge.run_python_script("print(1)\n", "f1", jail=jail)  # text in the path's place
    with pytest.raises(ValueError, match="looks like a path"):
        forge.run_python_script(os.path.join(work, "missing.py"), "f1", jail=jail)
    with pytest.raises(ValueError, match="exactly one"):
        forge.run_python_script(analysis_id="f1", jail=jail)
    script = write(work, "a.py", "print(1)\n")
    with pytest.raises(ValueError, match="exactly one"):
        forge.run_python_script(script, "f1", source="print(1)\n", jail=jail)
    with pytest.raises(ValueError, match="source"):
        forge.run_python_script(source="  ", analysis_id="f1", jail=jail)
    with pytest.raises(ValueError, match="not both"):
        forge.run_python_script(script, "f1", jail=jail, binary=fake.binary)
    with pytest.raises(ValueError, match="analysis_id"):
        forge.run_python_script(source="print(1)\n")

    rr = forge.run_python_script(script, "f2", jail=jail)
    assert rr.status == "ok" and isinstance(rr.report, Report) and rr.result is not None
    assert f"--ro={script}" in fake.args() and fake.args()[-2:] == [forge.PYTHON, script]
    rr = forge.run_python_script(source="print(2)\n", analysis_id="f3", binary=fake.binary)
    temp = fake.args()[-1]
    assert rr.ok and temp.endswith("/script.py") and f"--ro={temp}" in fake.args()
    assert not os.path.exists(temp), "the temporary script outlived the run"

