"""A run request's model, read once for a whole job.

Every session of a job (a profile makes one, a compare up to four) and the input specs
come from one parse through the one loader: sessions get the checked proto serialised,
or an edited copy's own bytes as they are. Reading and parsing a 200 MB model takes about
0.5 s, which a compare used to pay five times.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx

from onnxstudio.model.load import checked_copy, read_checked
from onnxstudio.runner.inputs import ModelInfo, model_info
from onnxstudio.runner.session import Session, SessionConfig


@dataclass(frozen=True)
class ModelSource:
    """The model at ``path`` as parsed and checked, or its edited copy ``edited``."""

    path: Path
    proto: onnx.ModelProto
    external: bool  # some tensor keeps its data in a file beside the model
    edited: bytes | None = None

    @classmethod
    def read(cls, path: str | Path, model_bytes: bytes | None = None) -> ModelSource:
        """``model_bytes``: an in-memory copy of ``path`` (e.g. edited) to read instead;
        its external data is checked as the file's is."""
        path = Path(path)
        checked = read_checked(path) if model_bytes is None else \
            checked_copy(path, model_bytes)
        return cls(path, checked.proto, checked.external, model_bytes)

    def info(self) -> ModelInfo:
        return model_info(self.path, self.proto)

    def session(self, config: SessionConfig, **options: Any) -> Session:
        """A session on this model; ``options``: Session's ``tweak`` and ``cancel``."""
        data = self.edited if self.edited is not None else self.proto.SerializeToString()
        edited = self.edited
        nodes = None if edited is None else (  # the bytes the window holds anyway
            lambda: [(n.op_type, n.name) for n in onnx.load_from_string(edited).graph.node])
        return Session(self.path, config, model_bytes=data, nodes=nodes, **options)
