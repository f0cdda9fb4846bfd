"""How numbers, durations, byte sizes and shapes are written, in every panel and the CLI.

One module so a value reads the same wherever it appears (the tensor dock and the
weights panel, the profile table and its summary line, ``info`` and the Model panel).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import SupportsFloat, TypeGuard


def format_number(value: object, digits: int = 6) -> str:
    """A cell value: floats to ``digits`` significant digits (inf/nan spelled out),
    bytes decoded, anything else as ``str``."""
    if isinstance(value, float) or _numpy_float(value):
        return f"{float(value):.{digits}g}"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _numpy_float(value: object) -> TypeGuard[SupportsFloat]:
    """Whether ``value`` is a numpy float; numpy is not imported for the question (a
    one-shot command forks before it is: see commands/export.py)."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.floating)


def format_ms(ms: float) -> str:
    """Three significant-ish digits: 123 / 12.4 / 1.24 / 0.124 ms."""
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def format_duration(ms: float) -> str:
    """A time with its unit, short enough for a box on the canvas: 123 ms, 1.2 ms,
    0.05 ms, 4.0 µs."""
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 1:
        return f"{ms:.1f} ms"
    if ms >= 0.01:
        return f"{ms:.2f} ms"
    return f"{ms * 1000:.1f} µs"


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def plural(n: int, word: str) -> str:
    """``1 node``, ``100,001 nodes``: a count with its word, thousands separated."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def human_count(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return str(n)


def short_count(n: int) -> str:
    """A count in three significant digits for a table's narrow column: 590K, 2.36M,
    123M (``human_count``'s 589.82K made every number column of the Cost dock wider)."""
    if n < 1000:
        return str(n)
    value, unit = n / 1000, "K"
    for bigger in ("M", "B", "T"):
        if float(f"{value:.3g}") < 1000:
            break
        value, unit = value / 1000, bigger
    text = f"{value:.3g}"
    return (text if float(text) < 1000 else f"{value:.0f}") + unit


Dims = Sequence[int | str | None]


def shape_text(shape: Dims | None) -> str:
    """``1×3×?×?`` (``?`` for an unknown dimension), ``scalar`` for rank 0, ``?`` for an
    unknown rank: compact, for labels, tables and edges."""
    if shape is None:
        return "?"
    return "×".join("?" if d is None else str(d) for d in shape) or "scalar"


def shape_list(shape: Dims | None) -> str:
    """``[1, 3, ?, ?]``: for property lists, and for an index into a tensor."""
    if shape is None:
        return "?"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


_GENERIC_NAMES = frozenset({"model.onnx", "model_quantized.onnx", "model_optimized.onnx",
                            "decoder_model.onnx", "decoder_model_merged.onnx"})
"""File names exporters give every model (genai's builder, optimum): the folder says which."""


def model_title(path: str | os.PathLike[str]) -> str:
    """A model's name for a tab: its file name, or its folder's when every export is called
    ``model.onnx`` (optimum's ``onnx/`` sub-folder skipped)."""
    from pathlib import Path

    p = Path(path)
    if p.name not in _GENERIC_NAMES:
        return p.name
    folder = p.parent.parent if p.parent.name == "onnx" else p.parent
    name = folder.resolve().name if folder.name in ("", ".") else folder.name
    return f"{name}/{p.name}" if name else p.name


def elide_path(text: str, fits: Callable[[str], bool]) -> str:
    """A scoped name shortened by whole segments from its start, keeping its last one and
    those that number something, which are never dropped ("…/layer.3/…/MatMul", where
    eliding characters showed "…ion/self/MatMul" for every layer alike). A dotted name
    without "/" (a weight, "encoder.layer.3.attention.self.query.weight") is cut at its
    dots, a number staying with the word before it ("…layer.3…query.weight"). The
    caller's elision handles the rest."""
    if fits(text):
        return text
    if "/" in text:
        parts, sep = text.split("/"), "/"
    elif "." in text:
        parts, sep = re.split(r"\.(?!\d)", text), "."
    else:
        return text
    keep = [True] * len(parts)
    numbered = [any(c.isdigit() for c in p) for p in parts]
    # numbered segments stay: without them "…/MaxPool_output_0" named pool1 and pool2
    # alike; when the rest does not fit, the caller's elision cuts characters
    order = [i for i in range(len(parts) - 1) if not numbered[i]]
    candidate = text
    for i in order:
        keep[i] = False
        candidate = _joined(parts, keep, sep)
        if fits(candidate):
            break
    return candidate


def _joined(parts: list[str], keep: list[bool], sep: str) -> str:
    out: list[str] = []
    for part, kept in zip(parts, keep, strict=True):
        if kept:
            out.append(part)
        elif not out or out[-1] != "…":
            out.append("…")
    joined = sep.join(out)
    return joined.replace(".…", "…").replace("….", "…") if sep == "." else joined
