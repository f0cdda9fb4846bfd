"""A worker process of ``concurrency/unit_pool.py`` laying out batches of units (the
hidden command ``_unit-pool``): inputs and results packed by ``unit_codec``, each batch
laid out by the very code the window's process runs (``batch.batched``)."""

from __future__ import annotations

from collections.abc import Callable

from onnxstudio.concurrency import unit_pool
from onnxstudio.layout import batch, unit_codec


def lay_out(payload: bytes, cancel: Callable[[], bool]) -> bytes:
    """One batch's packed inputs -> its packed results (LayoutCancelled if cancelled)."""
    return unit_codec.pack_results(batch.batched(unit_codec.unpack_inputs(payload), cancel))


def child_main(argv: list[str]) -> int:
    return unit_pool.serve(lay_out)
