"""scidex_jail.run as a real account: rootless, with supplementary groups.

The platform's service calls the Python API as its own user, which has
groups (every real account does; a systemd service with User= gets them
through initgroups). These tests make such an account with useradd, run a
small driver script as it through su (PAM, the account's groups) with
Debian's /usr/bin/python3, and read back what scidex_jail.run returned.
This host has no delegated cgroup for the account (cgroup v1 controllers),
so the runs switch the cgroup layer off by name.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import pytest

from conftest import PYTHON, REPO, leftovers, new_id

DRIVER = """
import json, sys
import scidex_jail
args = json.loads(sys.argv[1])
try:
    r = scidex_jail.run(args.pop("argv"), stdout=scidex_jail.CAPTURE, stderr=scidex_jail.CAPTURE, **args)
    # dict(): the report as plain JSON, whether it is a dict or a typed
    # mapping over its JSON.
    out = {"status": r.status, "stdout": r.stdout, "report": dict(r.report)}
except scidex_jail.JailSetupError as e:
    out = {"setup_error": e.stage, "message": e.message, "report": dict(e.report) if e.report is not None else None}
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int
    group: str  # a fresh supplementary group, besides users
    group_gid: int


def _sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


@pytest.fixture
def account() -> Iterator[Account]:
    """A fresh account, useradd -m -G users,<fresh group>, removed after."""
    name = "sjt-" + uuid.uuid4().hex[:8]
    group = name + "-g"
    _sh("groupadd", group)
    try:
        _sh("useradd", "-m", "-s", "/bin/sh", "-G", "users," + group, name)
        try:
            pw = pwd.getpwnam(name)
            yield Account(name, pw.pw_uid, pw.pw_gid, group, grp.getgrnam(group).gr_gid)
        finally:
            _sh("userdel", "-r", name)
    finally:
        _sh("groupdel", group)


@pytest.fixture
def stage(jail_bin: str) -> Iterator[str]:
    """The binary and the package, where any account can read them (the
    checkout may not be)."""
    d = tempfile.mkdtemp(prefix="sjt-py-")
    os.chmod(d, 0o755)
    shutil.copy(jail_bin, os.path.join(d, "scidex-jail"))
    shutil.copytree(os.path.join(REPO, "python", "scidex_jail"), os.path.join(d, "scidex_jail"))
    with open(os.path.join(d, "driver.py"), "w", encoding="utf-8") as f:
        f.write(DRIVER)
    for root, dirs, files in os.walk(d):
        for n in dirs:
            os.chmod(os.path.join(root, n), 0o755)
        for n in files:
            os.chmod(os.path.join(root, n), 0o755 if n == "scidex-jail" else 0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def run_as(acct: Account, stage: str, **kwargs: Any) -> dict[str, Any]:
    """scidex_jail.run(**kwargs) as acct, through su, in its own tmp-root."""
    tmp = tempfile.mkdtemp(prefix="sjt-py-tmp-")
    os.chmod(tmp, 0o755)
    os.chown(tmp, acct.uid, acct.gid)
    try:
        kwargs.update(tmp_root=tmp, unsafe_disable=["cgroup"], binary=os.path.join(stage, "scidex-jail"))
        line = " ".join(
            [
                "env",
                f"PYTHONPATH={stage}",
                PYTHON,
                "-B",
                os.path.join(stage, "driver.py"),
                "'" + json.dumps(kwargs).replace("'", "'\\''") + "'",
            ]
        )
        p = subprocess.run(["su", acct.name, "-s", "/bin/sh", "-c", line], cwd="/", capture_output=True, text=True)
        assert p.returncode == 0, f"driver as {acct.name}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        out: dict[str, Any] = json.loads(p.stdout)
        assert os.listdir(tmp) == [], f"tmp-root after the run holds {os.listdir(tmp)}"
        assert leftovers(kwargs["analysis_id"], out.get("report"), tmp_root=tmp) == []
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_run_as_account_with_groups(account: Account, stage: str) -> None:
    out = run_as(account, stage, argv=["/usr/bin/id"], analysis_id=new_id("acct"))
    assert out.get("status") == "ok", out
    assert out["stdout"].startswith("uid=1000(analysis) gid=1000(analysis) groups=1000(analysis),65534(nogroup)"), out["stdout"]
    enforced = out["report"]["enforced"]
    assert (enforced["host_uid"], enforced["host_gid"]) == (account.uid, account.gid)
    ident = enforced["identity"]
    kept = {g["name"]: (g["gid"], g["inside_gid"]) for g in ident["host_groups_kept"]}
    assert kept == {"users": (grp.getgrnam("users").gr_gid, 65534), account.group: (account.group_gid, 65534)}, ident
    assert "cannot drop supplementary groups" in ident["why"]
    assert ident["held_by"] == ["mount view", "landlock fs"]


def test_group_secret_as_account(account: Account, stage: str) -> None:
    lab = tempfile.mkdtemp(prefix="sjt-py-lab-")
    try:
        secret = os.path.join(lab, "secret.txt")
        with open(secret, "w", encoding="utf-8") as f:
            f.write("sjt-group-secret")
        for p, mode in ((lab, 0o750), (secret, 0o640)):
            os.chown(p, 0, account.group_gid)
            os.chmod(p, mode)
        # Outside the view: the analysis cannot read what its group can.
        out = run_as(account, stage, argv=["/bin/cat", secret], analysis_id=new_id("secret"))
        assert out.get("status") == "exit_nonzero" and "sjt-group-secret" not in out["stdout"], out
        # A view that would show it: refused, naming the group and the fix.
        out = run_as(account, stage, argv=["/bin/cat", secret], analysis_id=new_id("refused"), ro=[lab])
        assert out.get("setup_error") == "promises", out
        assert f"supplementary group {account.group}" in out["message"] and "--clear-groups" in out["message"], out
        assert "bug:" not in out["message"]
    finally:
        shutil.rmtree(lab, ignore_errors=True)
