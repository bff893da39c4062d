"""Print a scidex-jail report as a short summary a person reads first.

    /usr/bin/python3 examples/summarize.py REPORT.json

One line each: why the run ended, the completion note, time, CPU, peak
memory, what was enforced (namespaces, identity, Landlock, seccomp, cgroup,
anything degraded), then the output files. The report itself stays the
source of truth; this only reads it. Standard library only.
"""
from __future__ import annotations

import json
import sys
from typing import Any


def size(n: float) -> str:
    """n bytes in binary units, e.g. 139.2 MiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def enforced_lines(e: dict[str, Any]) -> list[str]:
    """What held the analysis in, one short line per layer."""
    lines = [
        f"namespaces  {', '.join(e.get('namespaces') or []) or 'none'}",
        f"identity    uid {e.get('uid')} inside (host uid {e.get('host_uid')}), "
        f"capabilities {e.get('capabilities') or 'none'}, no_new_privs {e.get('no_new_privs')}",
    ]
    ll = e.get("landlock")
    lines.append(
        f"landlock    ABI {ll['abi']} (policy needs {ll['required']}), {len(ll.get('rules') or [])} rules"
        if ll
        else "landlock    OFF"
    )
    sc = e.get("seccomp")
    lines.append(
        f"seccomp     {sc['policy']} ({sc['arch']}), {len(sc.get('denied') or [])} kinds of call denied"
        if sc
        else "seccomp     OFF"
    )
    net = e.get("net", "?")
    ports = e.get("allow_tcp") or []
    lines.append(f"network     {net}" + (f", outbound TCP {', '.join(map(str, ports))}" if ports else ""))
    cg = e.get("cgroup")
    if cg:
        written = cg.get("written") or {}
        limits = ", ".join(f"{k.rsplit('/', 1)[-1]}={v}" for k, v in sorted(written.items()))
        lines.append(f"cgroup      v{cg['version']} leaf, {limits}")
    else:
        lines.append("cgroup      OFF")
    promises = e.get("promises") or {}
    if promises:
        held = ", ".join(f"{k} {len(v)}" for k, v in promises.items())
        lines.append(f"promises    layers holding each: {held}")
    degraded = e.get("degraded") or []
    lines.append(f"degraded    {'; '.join(degraded) if degraded else 'nothing'}")
    return lines


def summarize(r: dict[str, Any]) -> str:
    """The whole summary as text."""
    usage = ((r.get("enforced") or {}).get("cgroup") or {}).get("usage") or {}
    peak = usage.get("peak_memory_bytes") or r.get("peak_rss_bytes") or 0
    out = [
        f"status      {r['status']} (exit code {r['exit_code']}{', ' + r['signal'] if r.get('signal') else ''})",
        f"notes       {r.get('completion_notes', '')}",
        f"time        {r.get('wall_seconds', 0):.2f} s wall, "
        f"{r.get('cpu_user_seconds', 0):.2f} s user + {r.get('cpu_system_seconds', 0):.2f} s system CPU",
        f"memory      {size(peak)} peak (limit {size(r['limits']['memory_bytes']) if r['limits'].get('memory_bytes') else 'none'})",
    ]
    if r.get("setup_error"):
        se = r["setup_error"]
        out.append(f"setup error stage {se['stage']}: {se['message']}")
    out += enforced_lines(r.get("enforced") or {})
    for w in r.get("warnings") or []:
        out.append(f"warning     {w}")
    files = [o for o in r.get("outputs") or [] if o.get("type") == "file"]
    where = f", copied to {r['collected_to']}" if r.get("collected_to") else ""
    out.append(f"outputs     {len(files)} file(s){where}")
    for o in files:
        out.append(f"  {o['size']:>9}  {o['path']}  sha256:{o['sha256'][:12]}")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} REPORT.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        print(summarize(json.load(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
