"""Model-diff times on the benchmark ladder: each graph against a fully renamed copy.

For each model: write a copy with every node and tensor renamed, open both (no shape
inference, as `onnxstudio diff` does), then time the node matching alone and the whole
diff with weight contents compared. Self-contained: `python -m tests.benchmarks.diff_times`.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LADDER = Path(os.environ.get("ONNXSTUDIO_SHARED", REPO.parent / "shared")) / "ladder"
MODELS = ("resnet50.onnx", "bert12.onnx", "bert96.onnx", "dag100k.onnx")


def diff_time_rows(models: tuple[str, ...] = MODELS) -> list[dict]:
    """One row per model found under ../shared/ladder."""
    import onnx

    from onnxstudio.model import load_model
    from onnxstudio.model.diff import diff_models
    from onnxstudio.model.diff_match import match_nodes
    from tests.diff_edits import rename_everything

    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            path = LADDER / name
            if not path.exists():
                continue
            proto = onnx.load(str(path))
            rename_everything(proto)
            copy = Path(tmp) / name
            onnx.save(proto, str(copy))
            del proto
            a = load_model(path, shape_inference=False)
            b = load_model(copy, shape_inference=False)
            t0, c0 = time.perf_counter(), time.process_time()
            match_nodes(a.graph, b.graph)
            t1, c1 = time.perf_counter(), time.process_time()
            result = diff_models(a, b)
            t2, c2 = time.perf_counter(), time.process_time()
            rows.append({"model": name, "nodes": len(a.graph.nodes), "match_s": t1 - t0,
                         "diff_s": t2 - t1, "match_cpu_s": c1 - c0, "diff_cpu_s": c2 - c1,
                         "paired": result.match_ratio(),
                         "changed": result.summary()["changed"]})
    return rows


def format_rows(rows: list[dict]) -> str:
    """Wall-clock and CPU seconds (CPU tells the cost on a machine shared with others)."""
    head = ("model", "nodes", "match_s", "match_cpu", "diff_s", "diff_cpu", "paired", "changed")
    lines = [f"{head[0]:<16}" + "".join(f"{h:>10}" for h in head[1:])]
    lines += [f"{r['model']:<16}{r['nodes']:>10,}{r['match_s']:>10.2f}{r['match_cpu_s']:>10.2f}"
              f"{r['diff_s']:>10.2f}{r['diff_cpu_s']:>10.2f}{r['paired']:>10.1%}"
              f"{r['changed']:>10}" for r in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_rows(diff_time_rows()))
