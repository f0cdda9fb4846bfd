"""Export times (SVG, PNG, PDF) for the benchmark ladder's largest graphs.

For each model: load, lay out (the state the window opens with, and everything
expanded), then export each format to a temporary folder; seconds and output sizes.
Self-contained: `python -m tests.benchmarks.export_times`.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LADDER = Path(os.environ.get("ONNXSTUDIO_SHARED", REPO.parent / "shared")) / "ladder"
MODELS = ("bert96.onnx", "dag30k.onnx", "dag100k.onnx")
FORMATS = ("svg", "png", "pdf")


def export_time_rows(models: tuple[str, ...] = MODELS, expand: tuple[str, ...] = (
        "current", "all"), scale: float = 2.0) -> list[dict]:
    """One row per (model, expand state) found under ../shared/ladder."""
    from onnxstudio.export.qtapp import ensure_gui_app

    ensure_gui_app()
    from onnxstudio.export.build import layout_for_export
    from onnxstudio.export.formats import export_layout
    from onnxstudio.export.options import ExportOptions
    from onnxstudio.model import load_model

    rows: list[dict] = []
    for name in models:
        path = LADDER / name
        if not path.exists():
            continue
        model = load_model(path)
        for state in expand:
            options = ExportOptions(expand=state, scale=scale)  # type: ignore[arg-type]
            t0 = time.perf_counter()
            layout = layout_for_export(model, options)
            row: dict = {"model": name, "expand": "default" if state == "current" else state,
                         "boxes": len(layout.boxes), "edges": len(layout.edges),
                         "layout_s": round(time.perf_counter() - t0, 2)}
            with tempfile.TemporaryDirectory() as folder:
                for fmt in FORMATS:
                    out = Path(folder) / f"graph.{fmt}"
                    t0 = time.perf_counter()
                    result = export_layout(layout, model, out, options)
                    row[f"{fmt}_s"] = round(time.perf_counter() - t0, 2)
                    row[f"{fmt}_mb"] = round(sum(p.stat().st_size for p in result.files) / 1e6, 1)
                    if fmt == "png":
                        row["png_px"] = f"{result.size[0]}×{result.size[1]}"
                    out.unlink(missing_ok=True)
            rows.append(row)
    return rows


def main() -> None:
    rows = export_time_rows()
    if not rows:
        print(f"no ladder models under {LADDER}")
        return
    cols = ["model", "expand", "boxes", "edges", "layout_s", "svg_s", "svg_mb", "png_s",
            "png_px", "png_mb", "pdf_s", "pdf_mb"]
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    for r in rows:
        print("  ".join(str(r.get(c, "")).ljust(w) for c, w in zip(cols, widths, strict=True)))


if __name__ == "__main__":
    main()
