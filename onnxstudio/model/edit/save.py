"""Write an edited model to a NEW file; the original and its external data stay untouched.

Weights kept as external data are read from the original's folder into a copy and written
again by onnx's external-data helpers beside the new file (``OUT.data``), so the new
model never points at the old model's data file. Writing is atomic
(``model/write.py``); checking is ``check.py``'s job, done before saving.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import onnx
from onnx import external_data_helper, shape_inference

from onnxstudio.errors import EditError
from onnxstudio.model.external import model_folder, tensors_of
from onnxstudio.model.write import (
    EXTERNAL_THRESHOLD,
    PROTOBUF_SAFE,
    check_destination,
    write_model_file,
)


@dataclass(frozen=True)
class SavedModel:
    path: Path
    data_path: Path | None


def external_files(model: onnx.ModelProto, source: Path) -> list[Path]:
    """The external-data files ``model`` reads, resolved against ``source``'s folder."""
    folder = model_folder(source)
    found: dict[Path, None] = {}
    for tensor in tensors_of(model):
        if external_data_helper.uses_external_data(tensor):
            info = {e.key: e.value for e in tensor.external_data}
            if info.get("location"):
                found[folder / info["location"]] = None
    return list(found)


def _inline_copy(model: onnx.ModelProto, source: Path) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    folder = str(model_folder(source))
    for tensor in tensors_of(copy):
        if external_data_helper.uses_external_data(tensor):
            try:  # locations were checked to lie inside the model's folder on opening
                external_data_helper.load_external_data_for_tensor(tensor, folder)
            except OSError as exc:
                raise EditError(f"{source.name}: cannot read the weights of "
                                f"'{tensor.name}' ({exc.strerror or exc})") from exc
            tensor.data_location = onnx.TensorProto.DEFAULT
            del tensor.external_data[:]
    return copy


def _refresh_value_info(model: onnx.ModelProto) -> None:
    """Re-infer the intermediate shape annotations the model carries, so an edit upstream
    leaves none stale; names inference cannot type any more are dropped."""
    if not model.graph.value_info:
        return
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    bare.graph.ClearField("value_info")
    try:
        inferred = shape_inference.infer_shapes(bare)
    except Exception:  # onnx raises several types; keeping the old annotations is safe
        return
    fresh = {vi.name: vi for vi in inferred.graph.value_info}
    kept = [fresh[vi.name] for vi in model.graph.value_info if vi.name in fresh]
    model.graph.ClearField("value_info")
    model.graph.value_info.extend(kept)


def save_edited(model: onnx.ModelProto, source: str | Path, dest: str | Path, *,
                protect: Iterable[Path] = ()) -> SavedModel:
    """Write ``model`` (an edited copy of ``source``) to ``dest``, atomically."""
    source, dest = Path(source), Path(dest).expanduser().absolute()
    check_destination(dest, [source, *external_files(model, source), *protect], EditError)
    external = bool(external_files(model, source))
    full = _inline_copy(model, source)
    _refresh_value_info(full)
    weights = sum(t.ByteSize() for t in full.graph.initializer)
    external = external or weights > EXTERNAL_THRESHOLD or full.ByteSize() > PROTOBUF_SAFE
    data_path = write_model_file(full, dest, external=external, error=EditError)
    return SavedModel(dest, data_path)
