"""The graph onnxruntime really runs: its optimised model, saved to a temporary folder.

onnxruntime writes the graph after its fusions and layout changes when
``SessionOptions.optimized_model_filepath`` is set; creating the session is enough. The
file goes into a fresh temporary folder, never beside the user's model, and the caller
removes it with :func:`discard` when done.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import onnxruntime as ort

from onnxstudio.errors import RunError
from onnxstudio.model.load import read_model_proto
from onnxstudio.runner.session import Session, SessionConfig

PREFIX = "onnxstudio-optimised-"


def save_optimised(path: str | Path, config: SessionConfig | None = None) -> Path:
    """Create a session for ``path`` with ``config`` and return where onnxruntime wrote
    the optimised graph (``<tmp>/onnxstudio-optimised-*/<stem>.<level>.onnx``)."""
    path = Path(path)
    config = config or SessionConfig()
    _proto, external = read_model_proto(path)  # our own checks first, external data too
    del _proto
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    target = folder / f"{path.stem}.{config.optimization}.onnx"

    def tweak(options: ort.SessionOptions) -> None:
        options.optimized_model_filepath = str(target)
        if external:  # keep large weights out of the protobuf, beside the copy
            options.add_session_config_entry(
                "session.optimized_model_external_initializers_file_name", f"{target.stem}.data")

    try:
        Session(path, config, tweak=tweak)
    except RunError:
        discard(target)
        raise
    if not target.is_file():
        discard(target)
        raise RunError(f"{path.name}: onnxruntime did not write its optimised graph")
    return target


def discard(optimised: Path) -> None:
    """Remove a folder :func:`save_optimised` made (nothing else: the prefix is checked)."""
    folder = optimised.parent
    if folder.name.startswith(PREFIX) and folder.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(folder, ignore_errors=True)
