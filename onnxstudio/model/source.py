"""Which file a Model is the unedited content of: what lets a cache keyed by the file's
bytes (layout/cache.py) serve it.

The loader marks each Model it builds from a file; nothing else does, so an edited
model (built from an in-memory proto), a diff's merged graph or any other derived model
carries no mark. The mark lives among the model's typed views (``types:`` keys of
``Model.derived``): when inferred shapes replace value types, the model no longer reads
as the file alone, and the mark goes with the other views those types made stale.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from onnxstudio.model.graph import Model

Shapes = Literal["declared", "inferred"]
Stamp = tuple[int, int, int, int, int]  # size, mtime_ns, ctime_ns, inode, device
_KEY = "types:source"


@dataclass(frozen=True)
class FileSource:
    """The file a model was read from, as it was then, and how its types were set:
    ``declared`` (as the file gives them) or ``inferred`` (onnx shape inference)."""

    path: Path
    stamp: Stamp
    shapes: Shapes


def file_stamp(path: Path) -> Stamp | None:
    """What changes whenever the file's bytes do (ctime cannot be set back by a user);
    None when the file cannot be looked at."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def mark_read_from(model: Model, path: Path, stamp: Stamp | None, shapes: Shapes) -> None:
    """Record that ``model`` is exactly the file at ``path`` as stamped before reading."""
    if stamp is not None:
        model.derived[_KEY] = FileSource(path, stamp, shapes)


def read_from(model: Model) -> FileSource | None:
    """The file ``model`` is the unedited content of, or None."""
    source = model.derived.get(_KEY)
    return source if isinstance(source, FileSource) else None
