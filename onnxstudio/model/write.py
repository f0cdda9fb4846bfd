"""Write a new model file safely: never over a protected file, atomically, data beside it.

Shared by sub-model cuts and edited models. Everything is written into a temporary folder
beside the target (so the final rename stays on one file system), optionally checked
there, and only then renamed into place: a failure never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import onnx

from onnxstudio.errors import OnnxStudioError

EXTERNAL_THRESHOLD = 100 * 2**20
"""Weights above this many bytes go to ``OUT.data`` beside a new model by default."""
PROTOBUF_SAFE = 1800 * 2**20
"""One message must stay below protobuf's 2 GB limit: above this, weights go external."""


def same_file(a: Path, b: Path) -> bool:
    with contextlib.suppress(OSError):
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def check_destination(dest: Path, protected: Iterable[Path],
                      error: type[OnnxStudioError]) -> None:
    """Refuse ``dest`` (or its ``.data`` file) when it is a protected file, or unusable."""
    protected = list(protected)
    for candidate in (dest, dest.with_name(f"{dest.name}.data")):
        if any(same_file(candidate, Path(other)) for other in protected):
            raise error(f"{candidate.name}: refusing to write over an open model or its "
                        "weights; choose another file name")
    if dest.is_dir():
        raise error(f"{dest}: is a folder, not a file name")
    parent = dest.parent if str(dest.parent) else Path(".")
    if not parent.is_dir():
        raise error(f"{dest}: folder {parent} does not exist")


def write_model_file(proto: onnx.ModelProto, dest: Path, *, external: bool,
                     error: type[OnnxStudioError],
                     check: Callable[[Path], None] | None = None) -> Path | None:
    """Write ``proto`` (weights inline) to ``dest``; with ``external``, weights of 1 KB and
    more go to ``DEST.data`` through onnx's external-data helpers. Returns the data path."""
    data_name = f"{dest.name}.data"
    parent = dest.parent if str(dest.parent) else Path(".")
    try:
        tmp_dir = Path(tempfile.mkdtemp(prefix=f".{dest.stem}.tmp-", dir=parent))
    except OSError as exc:
        raise error(f"{dest}: cannot create a file there ({exc.strerror})") from exc
    try:
        tmp_model = tmp_dir / dest.name
        if external:
            onnx.save_model(proto, tmp_model, save_as_external_data=True,
                            all_tensors_to_one_file=True, location=data_name,
                            size_threshold=1024)
        else:
            tmp_model.write_bytes(proto.SerializeToString())
        if check is not None:
            check(tmp_model)
        data_path = None
        if external and (tmp_dir / data_name).exists():
            data_path = dest.with_name(data_name)
            # onnx writes the weights 0600; they take the model file's mode (the umask's)
            os.chmod(tmp_dir / data_name, stat.S_IMODE(os.stat(tmp_model).st_mode))
            os.replace(tmp_dir / data_name, data_path)
        os.replace(tmp_model, dest)
    except OSError as exc:
        raise error(f"{dest}: could not be written ({exc.strerror or exc})") from exc
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return data_path


_UNCHECKED = "onnxstudio.unchecked"


def _unknown_default_ops(path: Path) -> onnx.ModelProto | None:
    """The model with onnxruntime's operators of the default domain (onnx has no schema
    for SimplifiedLayerNormalization, which the genai builder writes there) moved to a
    domain the checker leaves alone; None when there are none."""
    from onnxstudio.model import onnx_core
    from onnxstudio.model.ort_schemas import ort_schema

    proto = onnx.load(str(path), load_external_data=False)
    version = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 1)
    moved = 0
    for node in proto.graph.node:
        if node.domain in ("", "ai.onnx"):
            try:
                onnx_core.defs.get_schema(node.op_type, version, "")
            except onnx_core.SchemaError:
                if ort_schema(node.op_type, "", version) is not None:
                    node.domain = _UNCHECKED
                    moved += 1
    if not moved:
        return None
    proto.opset_import.append(onnx.helper.make_opsetid(_UNCHECKED, 1))
    return proto


def check_model_file(path: Path, error: type[OnnxStudioError], what: str) -> None:
    """onnx.checker on a written file, naming ``what`` failed; operators onnxruntime
    defines in onnx's own domain are not held against it."""
    try:
        stand_in = _unknown_default_ops(path)
        if stand_in is None:
            onnx.checker.check_model(str(path))
        else:
            saved = path.with_name(f".{path.name}.checked")
            try:
                saved.write_bytes(stand_in.SerializeToString())
                onnx.checker.check_model(str(saved))
            finally:
                saved.unlink(missing_ok=True)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
        raise error(f"{what} fails onnx.checker: {first}") from exc
