"""The package installs with pip offline through Debian's flit_core (no
build isolation), imports from PYTHONPATH, and needs nothing but the
standard library until post_process (or validate_report) is used."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from conftest import PYTHON, REPO

PKG = os.path.join(REPO, "python")
SCHEMA = os.path.join(REPO, "jail", "report", "report.schema.json")


def _py(code: str, python: str = PYTHON, *flags: str, **env: str) -> str:
    p = subprocess.run([python, *flags, "-c", code], cwd="/", env={"PATH": "/usr/bin:/bin", **env},
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stdout
    return p.stdout


def test_pythonpath_import_is_standard_library_only() -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import scidex_jail, scidex_jail.forge, scidex_jail.post_process\n"
        "assert 'psycopg' not in sys.modules, 'psycopg imported at import time'\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(new - set(sys.stdlib_module_names) - {'scidex_jail'}) or 'stdlib-only', scidex_jail.__file__)\n"
    )
    want = f"stdlib-only {os.path.join(PKG, 'scidex_jail', '__init__.py')}\n"
    assert _py(code, PYTHONPATH=PKG) == want
    # Without site-packages at all (-S): the standard library is enough.
    assert _py(code, PYTHON, "-S", PYTHONPATH=PKG) == want


def test_pip_install_works_offline() -> None:
    with tempfile.TemporaryDirectory(prefix="sj-venv-") as d:
        venv = os.path.join(d, "venv")
        subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", venv], check=True, timeout=300)
        pip = subprocess.run(
            [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-cache-dir", "--no-build-isolation", PKG],
            env={"PATH": "/usr/bin:/bin", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": d},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
        )  # fmt: skip
        assert pip.returncode == 0, pip.stdout
        out = _py(
            "import importlib.resources as r, scidex_jail, scidex_jail.post_process as pp\n"
            "files = sorted(p.name for p in r.files('scidex_jail').iterdir() if not p.name.startswith('__pycache__'))\n"
            "print(scidex_jail.__file__)\n"
            "print(' '.join(files))\n"
            "print('tables' if 'CREATE TABLE IF NOT EXISTS scidex_jail_runs' in pp.schema_sql() else 'no schema')\n"
            "r = scidex_jail.Jail(validate=True).run(['/bin/true'], analysis_id='py-pip-%d' % __import__('os').getpid())\n"
            "print(r.status)\n"
            f"print(r.report.schema == scidex_jail.REPORT_SCHEMA, scidex_jail.schema_text() == open({SCHEMA!r}).read())\n",
            python=os.path.join(venv, "bin", "python"),
            SCIDEX_JAIL_BIN=os.environ["SCIDEX_JAIL_BIN"],
        )
        where, files, schema, status, report = out.split("\n")[:5]
        assert where.startswith(venv + "/lib/"), where
        assert {"py.typed", "schema.sql", "report.schema.json", "forge.py", "post_process.py"} <= set(files.split()), files
        assert (schema, status, report) == ("tables", "ok", "True True"), out
        # The schema is installed as a file of its own, not the checkout's link.
        installed = os.path.join(os.path.dirname(where), "report.schema.json")
        assert os.path.isfile(installed) and not os.path.islink(installed), installed


def test_runs_on_this_interpreter() -> None:
    # The suite itself must run on Debian's Python, which the README promises.
    assert sys.executable.startswith("/usr/bin/python3"), sys.executable
