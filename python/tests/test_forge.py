"""scidex_jail.forge: the platform runtime's interface on the jail."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
from typing import Iterator

import pytest

from conftest import PYTHON, REPO, Jailish, leftovers, new_id, through, write
from scidex_jail import JailSetupError, forge

SCRIPT = (
    "import csv, os, sys\n"
    "with open('table.csv', 'w', newline='') as f:\n"
    "    csv.writer(f).writerows([['arg', 'value'], *[[a, len(a)] for a in sys.argv[1:]]])\n"
    "print('cwd', os.getcwd())\n"
    "print('warning', file=sys.stderr)\n"
)


def test_run_python_script_source_text(jail: Jailish, work: str) -> None:
    aid = new_id("src")
    before = set(glob.glob("/tmp/scidex-script-*"))
    rr = forge.run_python_script(source=SCRIPT, analysis_id=aid, args=["alpha", "be ta"], collect=os.path.join(work, "out"),
                                 **through(jail))  # fmt: skip
    assert (rr.returncode, rr.status) == (0, "ok"), rr.completion_notes
    assert rr.ok
    assert rr.stdout == f"cwd /tmp/scidex-analysis-{aid}\n"
    assert rr.stderr == "warning\n"
    assert rr.duration > 0 and "finished normally" in rr.completion_notes
    table = rr.output("table.csv")
    assert table is not None and table.collected_path is not None
    with open(table.collected_path, newline="") as f:
        assert f.read() == "arg,value\r\nalpha,5\r\nbe ta,5\r\n"
    assert [o.path for o in rr.outputs] == ["table.csv"]  # caches stay out of the outputs
    assert rr.report["id"] == aid and rr.result is not None and rr.result.report is rr.report
    # The temporary script is gone again.
    assert set(glob.glob("/tmp/scidex-script-*")) == before
    assert leftovers(aid, dict(rr.report)) == []


def test_run_python_script_path(jail: Jailish, work: str) -> None:
    path = write(work, "analysis.py", SCRIPT)
    aid = new_id("path")
    rr = forge.run_python_script(path, aid, args=["x"], **through(jail))
    assert (rr.returncode, rr.status) == (0, "ok"), rr.stderr
    assert [(o.path, o.size) for o in rr.outputs] == [("table.csv", len("arg,value\r\nx,1\r\n"))]
    # Only the script is bound, read-only.
    assert path in rr.report["enforced"]["mounts"]["read_only"]
    assert f"ro {path}" in rr.report["enforced"]["landlock"]["rules"]


def test_run_python_script_failures(jail: Jailish, work: str) -> None:
    rr = forge.run_python_script(source="import sys\nsys.exit('bad input')\n", analysis_id=new_id("fail"), timeout=30,
                                 **through(jail))  # fmt: skip
    assert (rr.returncode, rr.status, rr.stderr) == (1, "exit_nonzero", "bad input\n")
    rr = forge.run_python_script(source="import time\ntime.sleep(60)\n", analysis_id=new_id("slow"), timeout=0.5, **through(jail))
    assert rr.status == "timeout" and "timeout" in rr.completion_notes
    with pytest.raises(ValueError, match="looks like a path"):
        forge.run_python_script(os.path.join(work, "missing.py"), new_id("x"), **through(jail))
    secret = os.path.join(work, "private")
    os.mkdir(secret, 0o700)
    p = write(secret, "s.py", "print(1)\n")
    with pytest.raises(ValueError, match="not searchable by other users"):
        forge.run_python_script(p, new_id("x"), **through(jail))
    with pytest.raises(JailSetupError, match="no such profile"):
        forge.run_python_script(source="print(1)\n", analysis_id=new_id("x"), profile="nope", **through(jail))


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# test"]},
        {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
         "source": ["import os\n", "print('product', 6 * 7)\n", "open('cell.txt', 'w').write(os.getcwd())"]},
        {"cell_type": "code", "execution_count": None, "id": "c2", "metadata": {}, "outputs": [],
         "source": ["import socket\n", "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.getsockname()[0]"]},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}  # fmt: skip


ENV_MODULE = "scidex_env_probe"


@pytest.fixture(scope="module")
def analysis_env() -> Iterator[str]:
    """The environment recipe of docs/deploying.md ("An environment for
    analyses"): a virtual environment on the system's Python and its
    packages, plus a package of the platform's (a tiny one made here,
    installed by the system's pip without network), root's and 0755."""
    base = tempfile.mkdtemp(prefix="sj-pyenv-")
    os.chmod(base, 0o755)
    src, env = os.path.join(base, "src"), os.path.join(base, "env")
    os.makedirs(os.path.join(src, ENV_MODULE))
    write(src, "pyproject.toml",
          '[build-system]\nrequires = ["flit_core"]\nbuild-backend = "flit_core.buildapi"\n\n'
          f'[project]\nname = "{ENV_MODULE}"\nversion = "1.0"\ndescription = "the environment recipe\'s test package"\n')  # fmt: skip
    write(os.path.join(src, ENV_MODULE), "__init__.py", "ANSWER = 42\n")
    for argv in (
        ["/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", env],
        ["/usr/bin/python3", "-m", "pip", "--python", os.path.join(env, "bin", "python"), "install",
         "--quiet", "--no-index", "--no-build-isolation", "--no-cache-dir", src],
    ):  # fmt: skip
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        assert p.returncode == 0, f"{argv}: {p.stdout} (python3-venv, python3-pip, flit: .ci/deps test)"
    yield env
    shutil.rmtree(base, ignore_errors=True)


ENV_PROBE = f"""import errno, os, sys, sysconfig
import {ENV_MODULE} as m
print("answer", m.ANSWER)
print("prefix", sys.prefix)
site = sysconfig.get_paths()["purelib"]
for what, f in [("new module", lambda: open(os.path.join(site, "injected.py"), "w")),
                ("package file", lambda: open(m.__file__, "a"))]:
    try:
        f()
        print(what, "written")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
"""


def test_run_python_script_environment(jail: Jailish, analysis_env: str) -> None:
    """forge runs the script with the environment's interpreter (python=)
    and the environment bound read-only (ro=): the platform's package
    imports, nothing of the environment can be written."""
    python = os.path.join(analysis_env, "bin", "python")
    rr = forge.run_python_script(source=ENV_PROBE, analysis_id=new_id("env"), python=python, ro=[analysis_env], timeout=60,
                                 **through(jail))  # fmt: skip
    assert (rr.returncode, rr.status) == (0, "ok"), (rr.completion_notes, rr.stderr)
    lines = (rr.stdout or "").splitlines()
    assert lines[:2] == ["answer 42", f"prefix {analysis_env}"], lines
    for what in ("new module", "package file"):
        assert any(line in (f"{what} EROFS", f"{what} EACCES") for line in lines), lines
    assert analysis_env in rr.report["enforced"]["mounts"]["read_only"]
    # The system's interpreter has not got it: the import came from the environment.
    rr = forge.run_python_script(source=f"import {ENV_MODULE}\n", analysis_id=new_id("noenv"), ro=[analysis_env], timeout=60,
                                 **through(jail))  # fmt: skip
    assert rr.status == "exit_nonzero" and "ModuleNotFoundError" in (rr.stderr or ""), rr.stderr


def test_run_notebook(jail: Jailish, work: str) -> None:
    nb = write(work, "study.ipynb", json.dumps(NOTEBOOK))
    aid = new_id("nb")
    rr = forge.run_notebook(nb, aid, timeout=300, collect=os.path.join(work, "out"), **through(jail))
    assert (rr.returncode, rr.status) == (0, "ok"), rr.stderr[-3000:]
    assert rr.report["limits"]["profile"] == "notebook" and rr.report["enforced"]["net"] == "loopback"
    assert sorted(o.path for o in rr.outputs) == ["cell.txt", "study.ipynb"]
    executed = rr.output("study.ipynb")
    assert executed is not None and executed.collected_path is not None
    with open(executed.collected_path) as f:
        doc = json.load(f)
    code = [c for c in doc["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == [1, 2]
    assert code[0]["outputs"][0]["text"] == ["product 42\n"]
    assert code[1]["outputs"][0]["data"]["text/plain"] == ["'127.0.0.1'"]
    with open(os.path.join(work, "out", "cell.txt")) as f:
        assert f.read() == f"/tmp/scidex-analysis-{aid}"
    # The input notebook was not touched.
    with open(nb) as f:
        assert json.load(f) == NOTEBOOK
    assert leftovers(aid, dict(rr.report)) == []


# Prints 400 MiB on stdout in 1 MiB writes of 1 KiB lines, then a line on
# stderr, and fails.
PRINTER = (
    "import sys\n"
    "block = (b'y' * 1023 + b'\\n') * 1024\n"
    "for _ in range(400):\n"
    "    sys.stdout.buffer.write(block)\n"
    "sys.stdout.flush()\n"
    "sys.exit('printed')\n"
)

# Runs in a fresh interpreter so that its peak RSS is this run's alone.
MEASURE = """
import json, resource, sys
from scidex_jail import forge
idle = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rr = forge.run_python_script(source=sys.argv[1], analysis_id=sys.argv[2], timeout=120)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
facts = {k: getattr(rr, k, None) for k in ("stdout_bytes", "stdout_dropped", "stdout_tail", "truncated")}
facts["jail"] = (rr.report.raw.get("streams") or {}).get("stdout")
print(json.dumps({"idle_kib": idle, "peak_kib": peak, "status": rr.status, "stdout_len": len(rr.stdout),
                  "stderr": rr.stderr, "head": rr.stdout[:2048], **facts}))
"""


def test_printer_bounded_in_the_platform_process(jail_bin: str) -> None:
    """Issue 33, item 1: an analysis printing 400 MB keeps the platform
    process within 100 MB of its idle size (it peaked at 823 MiB)."""
    env = {**os.environ, "PYTHONPATH": os.path.join(REPO, "python")}
    proc = subprocess.run([PYTHON, "-c", MEASURE, PRINTER, new_id("printer")], env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    got = json.loads(proc.stdout)
    grew = (got["peak_kib"] - got["idle_kib"]) << 10
    assert grew < 100 << 20, f"the platform process grew by {grew >> 20} MiB printing 400 MiB, want < 100"
    assert (got["status"], got["stderr"], got["truncated"]) == ("exit_nonzero", "printed\n", True)
    line = "y" * 1023 + "\n"
    # What reached this process (all of it, or what the jail's own
    # per-stream budget delivered: the report's streams) was counted, and
    # 1 MiB of head and 4 KiB of tail kept.
    seen, jail = got["stdout_bytes"], got["jail"]
    if jail is None:
        assert seen == 400 << 20
    else:
        # The jail's delivered bytes, and its one line marking the cut.
        assert jail["bytes"] == 400 << 20 and jail["delivered"] <= seen <= jail["delivered"] + 512, (seen, jail)
    assert got["stdout_dropped"] == max(0, seen - (1 << 20) - 4096)
    assert got["truncated"] or jail["dropped"] > 0, "the truncation is stated"
    assert got["head"] == line * 2 and len(got["stdout_tail"]) == 4096 and set(got["stdout_tail"]) == set(line)
    assert got["stdout_len"] < (1 << 20) + 8192


@pytest.mark.unit
@pytest.mark.parametrize(
    "limit,writes,text,total,dropped,tail",
    [
        pytest.param(10, [b"abc"], "abc", 3, 0, "abc", id="under the limit"),
        pytest.param(2, [b"ab", b"cd"], "abcd", 4, 0, "abcd", id="past the head, within the tail"),
        pytest.param(0, [b"x" * 5000], None, 5000, 904, "x" * 4096, id="no head"),
        pytest.param(3, [b"abc", b"d" * 3000, b"e" * 3000], None, 6003, 1904, "d" * 1096 + "e" * 3000, id="head, dropped, tail"),
        pytest.param(1, [b"\xff" * 9000], None, 9000, 4903, "\ufffd" * 4096, id="bad utf-8 replaced"),
        pytest.param(100, [b"a" * 100, b"b" * 3946], "a" * 100 + "b" * 3946, 4046, 0, "a" * 100 + "b" * 3946, id="the whole head in the tail"),
    ],
)
def test_bounded_capture(limit: int, writes: list, text: object, total: int, dropped: int, tail: str) -> None:
    from scidex_jail._capture import BoundedCapture

    cap = BoundedCapture(limit)
    for w in writes:
        assert cap.write(w) == len(w)
    assert (cap.total, cap.dropped, cap.tail()) == (total, dropped, tail), f"BoundedCapture({limit}) of {[len(w) for w in writes]}"
    if text is not None:
        assert cap.text() == text
    else:
        assert f"{dropped} bytes dropped here" in cap.text() and cap.text().endswith(tail)


@pytest.mark.unit
def test_capture_limit_argument() -> None:
    for bad in (-1, 1.5, True, "1M"):
        with pytest.raises(ValueError, match="capture_limit"):
            forge.run_python_script(source="print(1)\n", analysis_id="x", capture_limit=bad)  # type: ignore[arg-type]
