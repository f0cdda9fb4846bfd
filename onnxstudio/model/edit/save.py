"""Write an edited model to a NEW file; the original and its external data stay untouched.

Weights kept as external data are read from the original's folder into a copy and written
again by onnx's external-data helpers beside the new file (``OUT.data``), so the new
model never points at the old model's data file. Everything is written into a temporary
folder beside the target, then renamed into place; checking is ``check.py``'s job, done
before (the saved file must be what the user saw checked).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import onnx
from onnx import external_data_helper, shape_inference

from onnxstudio.errors import EditError

EXTERNAL_THRESHOLD = 100 * 2**20
"""Without external data in the original, weights above this go to ``OUT.data`` too."""
_PROTOBUF_SAFE = 1800 * 2**20


@dataclass(frozen=True)
class SavedModel:
    path: Path
    data_path: Path | None


def _same_file(a: Path, b: Path) -> bool:
    with contextlib.suppress(OSError):
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def external_files(model: onnx.ModelProto, source: Path) -> list[Path]:
    """The external-data files ``model`` reads, resolved against ``source``'s folder."""
    folder = source.resolve().parent
    found: dict[Path, None] = {}
    for tensor in external_data_helper._get_all_tensors(model):
        if external_data_helper.uses_external_data(tensor):
            info = {e.key: e.value for e in tensor.external_data}
            if info.get("location"):
                found[folder / info["location"]] = None
    return list(found)


def check_target(model: onnx.ModelProto, source: Path, dest: Path,
                 protect: Iterable[Path] = ()) -> None:
    """Refuse a destination that is the model, its external data or another open file."""
    data = dest.with_name(f"{dest.name}.data")
    for other in (source, *external_files(model, source), *protect):
        for candidate in (dest, data):
            if _same_file(candidate, Path(other)):
                raise EditError(f"{candidate.name}: refusing to write over the model being "
                                "edited or its weights; choose another file name")
    if dest.is_dir():
        raise EditError(f"{dest}: is a folder, not a file name")
    if not dest.parent.is_dir():
        raise EditError(f"{dest}: folder {dest.parent} does not exist")


def _inline_copy(model: onnx.ModelProto, source: Path) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    folder = str(source.resolve().parent)
    for tensor in external_data_helper._get_all_tensors(copy):
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
    check_target(model, source, dest, protect)
    external = bool(external_files(model, source))
    full = _inline_copy(model, source)
    _refresh_value_info(full)
    weights = sum(t.ByteSize() for t in full.graph.initializer)
    external = external or weights > EXTERNAL_THRESHOLD or full.ByteSize() > _PROTOBUF_SAFE
    data_name = f"{dest.name}.data"
    try:
        tmp_dir = Path(tempfile.mkdtemp(prefix=f".{dest.stem}.edit-", dir=dest.parent))
    except OSError as exc:
        raise EditError(f"{dest}: cannot create a file there ({exc.strerror})") from exc
    try:
        tmp_model = tmp_dir / dest.name
        if external:
            onnx.save_model(full, tmp_model, save_as_external_data=True,
                            all_tensors_to_one_file=True, location=data_name,
                            size_threshold=1024)
        else:
            tmp_model.write_bytes(full.SerializeToString())
        data_path = None
        if (tmp_dir / data_name).exists():
            data_path = dest.with_name(data_name)
            os.replace(tmp_dir / data_name, data_path)
        os.replace(tmp_model, dest)
    except OSError as exc:
        raise EditError(f"{dest}: could not be written ({exc.strerror or exc})") from exc
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return SavedModel(dest, data_path)
