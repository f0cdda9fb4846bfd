"""Convert a model to another opset with onnx's version converter, into a NEW file.

The opened file is only read. The result is written to a temporary folder beside the
destination, checked with onnx.checker there, and only then moved into place, so a failed
or rejected conversion leaves nothing behind. The source model and its external-data
files are never a valid destination; an existing destination needs ``overwrite=True``
(the UI asks the user first).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import onnx
from onnx import external_data_helper, version_converter

from onnxstudio.errors import OnnxStudioError, with_details
from onnxstudio.model.external import load_external_weights, model_folder, tensors_of
from onnxstudio.model.load import read_model_proto
from onnxstudio.model.schemas import newest_opset
from onnxstudio.readable import onnx_message

EXTERNAL_THRESHOLD = 1_800_000_000  # bytes: beyond this the weights go to a .data file


class ConversionError(OnnxStudioError):
    """The model could not be converted or the result could not be written."""


@dataclass(frozen=True)
class ConversionResult:
    path: Path
    source_opset: int
    target_opset: int
    external_data: Path | None  # the weights file written beside ``path``, if any


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _source_files(proto: onnx.ModelProto, source: Path) -> set[Path]:
    files = {source.resolve()}
    for tensor in tensors_of(proto):
        if external_data_helper.uses_external_data(tensor):
            info = {e.key: e.value for e in tensor.external_data}
            files.add((model_folder(source) / info.get("location", "")).resolve())
    return files


def default_target_path(source: Path, opset: int) -> Path:
    """'model.onnx' -> 'model.opset17.onnx' beside it (the dialog's suggestion)."""
    return source.with_name(f"{source.stem}.opset{opset}{source.suffix or '.onnx'}")


def convert_opset(source: str | Path, target_opset: int, destination: str | Path,
                  *, overwrite: bool = False) -> ConversionResult:
    """Convert ``source`` to ``target_opset`` of the default domain and save to ``destination``.

    Raises ConversionError with a message fit for the user on any failure.
    """
    source, destination = Path(source), Path(destination)
    if not 1 <= target_opset <= newest_opset(""):
        raise ConversionError(
            f"opset {target_opset} is not one onnx knows (1 – {newest_opset('')})")
    proto, external = read_model_proto(source)
    protected = _source_files(proto, source)
    data_name = destination.name + ".data"
    targets = [destination.resolve()] + ([destination.resolve().with_name(data_name)]
                                         if external else [])
    for target in targets:
        if target in protected:
            raise ConversionError(
                f"{target.name}: that is the opened model (or its weights); "
                "choose a new file name")
        if target.exists() and not overwrite:
            raise ConversionError(f"{target.name} already exists; choose another name")
    source_opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")),
                        0)
    if external:
        load_external_weights(proto, source)
    try:
        converted = version_converter.convert_version(proto, target_opset)
    except Exception as exc:  # onnx raises RuntimeError/ValueError/ConvertError variants
        line = onnx_message(str(exc), [source_opset, target_opset])
        raise ConversionError(with_details(
            f"cannot convert {source.name} from opset {source_opset} to {target_opset}: "
            f"{line}", str(exc))) from exc
    # An opset needs a minimum IR version; custom domains are unknown to onnx's table.
    known = [o for o in converted.opset_import if o.domain in ("", "ai.onnx", "ai.onnx.ml")]
    with contextlib.suppress(Exception):
        converted.ir_version = max(converted.ir_version,
                                   onnx.helper.find_min_ir_version_for(known, True))
    big = converted.ByteSize() > EXTERNAL_THRESHOLD if not external else True
    return _write(converted, destination, data_name if big else None, source_opset,
                  target_opset)


def _write(model: onnx.ModelProto, destination: Path, data_name: str | None,
           source_opset: int, target_opset: int) -> ConversionResult:
    folder = destination.resolve().parent
    try:
        staging = Path(tempfile.mkdtemp(prefix=".onnxstudio-convert-", dir=folder))
    except OSError as exc:
        raise ConversionError(f"cannot write to {folder} ({exc.strerror or exc})") from exc
    try:
        staged = staging / destination.name
        try:
            if data_name:
                onnx.save_model(model, str(staged), save_as_external_data=True,
                                all_tensors_to_one_file=True, location=data_name,
                                size_threshold=1024)
            else:
                onnx.save_model(model, str(staged))
        except (OSError, ValueError) as exc:
            raise ConversionError(f"cannot write {destination.name} ({exc})") from exc
        try:
            onnx.checker.check_model(str(staged))
        except onnx.checker.ValidationError as exc:
            raise ConversionError(
                f"the converted model fails onnx.checker: {_first_line(exc)}") from exc
        data_path = None
        if data_name:
            data_path = folder / data_name
            os.replace(staging / data_name, data_path)
        os.replace(staged, destination)
        return ConversionResult(destination, source_opset, target_opset, data_path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
