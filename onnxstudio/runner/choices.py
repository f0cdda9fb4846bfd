"""Choices are remembered per model by content hash, so a renamed or copied file keeps
them (the run panel keys its per-model settings with ``model_key``).

Hashing 32 MB takes ~50 ms, so the result is kept per (path, size, mtime) and the
window's open task computes it off the GUI thread before the run panel asks.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

WHOLE_FILE_LIMIT = 32 << 20  # larger: size + first and last 8 MB
EDGE = 8 << 20
REMEMBERED = "remembered for this model"
_KEYS: dict[tuple[str, int, int], str] = {}


def model_key(path: str | Path) -> str:
    """A content hash of the model file (sampled for very large files)."""
    p = Path(path)
    stat = p.stat()
    known = (str(p.resolve()), stat.st_size, stat.st_mtime_ns)
    if known not in _KEYS:
        _KEYS[known] = _content_hash(p, stat.st_size)
    return _KEYS[known]


def _content_hash(p: Path, size: int) -> str:
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
