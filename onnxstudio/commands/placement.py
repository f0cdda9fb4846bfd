"""`onnxstudio placement MODEL`: which execution provider and kernel run each node."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from onnxstudio.model.formatting import plural


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "placement", help="which execution provider and kernel run each node",
        description="Create an onnxruntime session (PROVIDER first, then the CPU) and report "
                    "where each node runs: provider, kernel, nodes folded into another's "
                    "kernel, constants computed at load, and the nodes that fell back to "
                    "the CPU. Needs onnxruntime 1.24 or newer.")
    p.add_argument("model", help="path to an .onnx file")
    p.add_argument("--provider", default="CPUExecutionProvider", metavar="P",
                   help="execution provider to ask for first (default CPU); see the list "
                        "this command prints")
    p.add_argument("--optimization", choices=["disable", "basic", "extended", "all"],
                   default="all", help="graph optimisation level of the session")
    p.add_argument("--time", action="store_true",
                   help="also profile one run on random inputs: the time per provider")
    p.add_argument("--json", action="store_true",
                   help="print {nodes: [{id, name, op_type, provider, kernel}], providers}")


def run(args: argparse.Namespace) -> int:
    from onnxstudio.runner.placement import placement, provider_times

    path = Path(args.model)
    found = placement(path, args.provider, args.optimization)
    if args.time:
        from onnxstudio.runner.pipeline import RunRequest
        from onnxstudio.runner.profile import profile
        from onnxstudio.runner.session import SessionConfig

        timed = profile(RunRequest(path, random=True,
                                   config=SessionConfig(args.provider, args.optimization)))
        found.times = provider_times([(n.provider, n.time_ms) for n in timed.nodes])
    if args.json:
        sys.stdout.write(json.dumps(found.as_json()) + "\n")  # C encoder: dump is Python
        return 0
    _print(path, found)
    return 0


def _print(path: Path, found: Any) -> None:
    w = sys.stdout.write
    out = found.as_json()
    w(f"{path.name}: {args_line(found)}\n")
    w("providers\n")
    for p in out["providers"]:
        devices = f" on {', '.join(p['devices'])}" if p["devices"] else ""
        state = "" if p["usable"] else f"  (not usable here: {p['plugin'] or 'not built in'})"
        time = (f", {p['time_ms']:.3f} ms ({100 * p['time_share']:.1f} % of the time)"
                if "time_ms" in p else "")
        w(f"  {p['name']}{devices}: {plural(p['nodes'], 'node')} "
          f"({100 * p['node_share']:.1f} %){time}{state}\n")
    idle = [n for n in found.nodes if n.provider is None]
    if idle:
        w(f"  not run: {plural(len(idle), 'node')} (constants computed at load, no-ops)\n")
    fused = [n for n in found.nodes if n.absorbed or "(" in n.kernel]
    if fused:
        w(f"fused kernels ({len(fused)})\n")
        names = {n.id: n.name or n.id for n in found.nodes}
        width = max(len(n.kernel) for n in fused[:15])
        for n in fused[:15]:
            absorbed = ", ".join(names[a] for a in n.absorbed)
            w(f"  {n.kernel:<{width}} {n.name or n.id}" + (f"  absorbs {absorbed}" if absorbed
                                                      else "") + "\n")
        if len(fused) > 15:
            w(f"  … and {len(fused) - 15} more (--json lists every node)\n")
    fallbacks = found.fallbacks()
    if found.requested != "CPUExecutionProvider":
        w(f"CPU fallbacks ({len(fallbacks)})\n")
        for n in fallbacks[:20]:
            w(f"  {n.op_type:<20} {n.name or n.id}\n")
        if len(fallbacks) > 20:
            w(f"  … and {len(fallbacks) - 20} more\n")
    if found.extra:
        w(f"kernels onnxruntime added: {len(found.extra)} "
          f"({', '.join(sorted({op for _, _, op in found.extra}))})\n")


def args_line(found: Any) -> str:
    return f"asked for {found.requested}, optimisation {found.optimization}"
