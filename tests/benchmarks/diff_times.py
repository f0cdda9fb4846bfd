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
            t0 = time.perf_counter()
            match_nodes(a.graph, b.graph)
            t1 = time.perf_counter()
            result = diff_models(a, b)
            t2 = time.perf_counter()
            rows.append({"model": name, "nodes": len(a.graph.nodes), "match_s": t1 - t0,
                         "diff_s": t2 - t1, "paired": result.match_ratio(),
                         "changed": result.summary()["changed"]})
    return rows


def format_rows(rows: list[dict]) -> str:
    lines = [f"{'model':<16}{'nodes':>9}{'match_s':>9}{'diff_s':>9}{'paired':>9}{'changed':>9}"]
    lines += [f"{r['model']:<16}{r['nodes']:>9,}{r['match_s']:>9.2f}{r['diff_s']:>9.2f}"
              f"{r['paired']:>9.1%}{r['changed']:>9}" for r in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_rows(diff_time_rows()))
