"""The network modes are the binary's: the Python package reads them from
``scidex-jail profiles --schema`` (the rows of the jail's table of modes,
jail/netmode) and types none of them, so a mode the jail adds is a value
of ``net`` with no line of the package changed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import scidex_jail
from conftest import new_id
from scidex_jail import _limits
from scidex_jail._options import build_spec, net_modes
from scidex_jail._prepared import jail_message


def test_net_modes_are_the_schemas(jail_bin: str) -> None:
    data = _limits.schema(jail_bin)
    assert data is not None
    net = next(o for o in data["options"] if o["name"] == "net")
    assert net_modes(jail_bin) == tuple(net["choices"]) == ("none", "loopback", "host", "egress")
    for mode in net_modes(jail_bin):
        spec = build_spec(["/bin/true"], analysis_id=new_id("net"), binary=jail_bin, net=mode)
        assert f"--net={mode}" in spec.command("/tmp/r.json")


def test_net_refused_with_the_binarys_choices(jail_bin: str) -> None:
    with pytest.raises(ValueError) as e:
        scidex_jail.run(["/bin/true"], analysis_id=new_id("net"), binary=jail_bin, net="wifi")
    assert str(e.value) == "net 'wifi': give one of none, loopback, host, egress"
    # The binary refuses it with the same choices, from the same table.
    p = subprocess.run([jail_bin, "run", f"--id={new_id('net')}", "--net=wifi", "--", "/bin/true"], capture_output=True, text=True)
    assert p.returncode == 125 and jail_message(p.stderr).endswith('--net "wifi": choose none, loopback, host or egress'), p.stderr


def test_a_mode_the_binary_adds_is_a_value_of_net(jail_bin: str, tmp_path: Path) -> None:
    # A stand-in binary whose schema has one more row in its table of modes
    # (what a jail with a new mode prints): the package takes the mode, and
    # names it among the choices, with no change of its own.
    data = _limits.schema(jail_bin)
    assert data is not None
    data = json.loads(json.dumps(data))
    next(o for o in data["options"] if o["name"] == "net")["choices"].append("tunnel")
    (tmp_path / "schema.json").write_text(json.dumps(data))
    stand_in = tmp_path / "scidex-jail"
    stand_in.write_text(f"#!/bin/sh\nexec cat {tmp_path / 'schema.json'}\n")
    os.chmod(stand_in, 0o755)
    spec = build_spec(["/bin/true"], analysis_id=new_id("net"), binary=str(stand_in), net="tunnel")
    assert "--net=tunnel" in spec.command("/tmp/r.json")
    with pytest.raises(ValueError, match="give one of none, loopback, host, egress, tunnel"):
        build_spec(["/bin/true"], analysis_id=new_id("net"), binary=str(stand_in), net="tunel")


def test_egress_keywords(jail_bin: str) -> None:
    # allow_hosts and allow_ranges go to the command line and to a server's
    # request under the rows' names; their shape is checked here, their
    # entries by the jail (exit 125, naming the keyword's flag and entry).
    spec = build_spec(["/bin/true"], analysis_id=new_id("eg"), binary=jail_bin, net="egress",
                      allow_hosts=["eutils.ncbi.nlm.nih.gov", "*.uniprot.org"], allow_ranges=["10.20.0.0/16"])  # fmt: skip
    cmd = spec.command("/tmp/r.json")
    assert "--allow-host=eutils.ncbi.nlm.nih.gov" in cmd and "--allow-host=*.uniprot.org" in cmd and "--allow-range=10.20.0.0/16" in cmd
    req = spec.request("/")
    assert req["allow_hosts"] == ["eutils.ncbi.nlm.nih.gov", "*.uniprot.org"] and req["allow_ranges"] == ["10.20.0.0/16"]
    for bad in ("eutils.ncbi.nlm.nih.gov", [""], [3]):
        with pytest.raises(ValueError, match="allow_hosts"):
            build_spec(["/bin/true"], analysis_id=new_id("eg"), binary=jail_bin, net="egress", allow_hosts=bad)  # type: ignore[arg-type]
    with pytest.raises(scidex_jail.JailError) as e:
        scidex_jail.run(["/bin/true"], analysis_id=new_id("eg"), binary=jail_bin, net="egress", allow_hosts=["*"])
    assert 'host entry "*": a bare * would allow every host' in str(e.value), str(e.value)
