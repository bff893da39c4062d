"""A PEP 517 build backend for scidex_jail, standard library only.

Why not setuptools: pip builds a package in an isolated environment into
which it installs the backend from an index; on an offline machine that
fails. This backend lives in the tree (``backend-path``) and needs nothing,
so ``pip install ./python`` works anywhere pip does. It builds a pure
``py3-none-any`` wheel of the ``scidex_jail`` directory (its .py files,
``py.typed`` and ``schema.sql``), an sdist, and editable wheels (PEP 660,
a ``.pth`` file naming this directory).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Any, Dict, List, Mapping, Optional, Tuple

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "scidex_jail"
_DATA = (".py", ".typed", ".sql")


def _project() -> Mapping[str, Any]:
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the few plain keys this backend reads
        text = raw.decode()
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        return {k: v for k, v in re.findall(r'^([a-z-]+)\s*=\s*"([^"]*)"', section, re.M)}
    project: Mapping[str, Any] = tomllib.loads(raw.decode())["project"]
    return project


def _names() -> Tuple[str, str, str]:
    p = _project()
    name, version = str(p["name"]), str(p["version"])
    dist = re.sub(r"[-_.]+", "_", name).lower()
    return name, version, f"{dist}-{version}"


def _metadata() -> bytes:
    p = _project()
    name, version, _ = _names()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {p.get('description', '')}",
        f"Requires-Python: {p.get('requires-python', '>=3.9')}",
        "Provides-Extra: postgres",
        'Requires-Dist: psycopg>=3.1; extra == "postgres"',
        "Description-Content-Type: text/markdown",
        "",
    ]
    readme = os.path.join(HERE, "README.md")
    body = open(readme, encoding="utf-8").read() if os.path.exists(readme) else ""
    return ("\n".join(lines) + "\n" + body).encode()


def _wheel_file() -> bytes:
    return b"Wheel-Version: 1.0\nGenerator: scidex_jail_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _package_files() -> List[Tuple[str, str]]:
    """(path in the archive, path on disk) of the package's files, sorted."""
    out = []
    root = os.path.join(HERE, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(_DATA):
                disk = os.path.join(dirpath, fn)
                out.append((os.path.relpath(disk, HERE).replace(os.sep, "/"), disk))
    return out


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(wheel_directory: str, members: List[Tuple[str, bytes]]) -> str:
    _, _, base = _names()
    dist_info = f"{base}.dist-info"
    members = members + [
        (f"{dist_info}/METADATA", _metadata()),
        (f"{dist_info}/WHEEL", _wheel_file()),
        (f"{dist_info}/top_level.txt", f"{PACKAGE}\n".encode()),
    ]
    record = "".join(f"{n},{_digest(d)},{len(d)}\n" for n, d in members) + f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode()))
    name = f"{base}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in members:
            info = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, d)
    return name


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """Nothing: the standard library builds the wheel."""
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """Nothing."""
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """Nothing."""
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """Write the .dist-info directory pip reads before building."""
    _, _, base = _names()
    d = os.path.join(metadata_directory, f"{base}.dist-info")
    os.makedirs(d, exist_ok=True)
    for fn, data in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(d, fn), "wb") as f:
            f.write(data)
    return f"{base}.dist-info"


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """Build the pure-Python wheel."""
    members = []
    for arc, disk in _package_files():
        with open(disk, "rb") as f:
            members.append((arc, f.read()))
    return _write_wheel(wheel_directory, members)


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """An editable wheel: a .pth file that puts this directory on sys.path."""
    return _write_wheel(wheel_directory, [(f"__editable__.{PACKAGE}.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """The source tree: pyproject.toml, README.md, the backend and the package."""
    _, _, base = _names()
    name = f"{base}.tar.gz"
    files = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")), ("README.md", os.path.join(HERE, "README.md"))]
    files.append(("_build/scidex_jail_build.py", os.path.abspath(__file__)))
    files += _package_files()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        pkg_info = _metadata()
        for arc, data in [("PKG-INFO", pkg_info)] + [(a, open(d, "rb").read()) for a, d in files if os.path.exists(d)]:
            info = tarfile.TarInfo(f"{base}/{arc}")
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    return name
