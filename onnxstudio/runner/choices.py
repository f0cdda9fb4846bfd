"""Choices are remembered per model by content hash, so a renamed or copied file keeps
them (the run panel keys its per-model settings with ``model_key``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

WHOLE_FILE_LIMIT = 32 << 20  # larger: size + first and last 8 MB (read on the GUI thread)
EDGE = 8 << 20
REMEMBERED = "remembered for this model"


def model_key(path: str | Path) -> str:
    """A content hash of the model file (sampled for very large files)."""
    p = Path(path)
    size = p.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with p.open("rb") as f:
        if size <= WHOLE_FILE_LIMIT:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        else:
            h.update(f.read(EDGE))
            f.seek(size - EDGE)
            h.update(f.read(EDGE))
    return h.hexdigest()
