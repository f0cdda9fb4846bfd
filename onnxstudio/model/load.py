"""Open a model file safely: every failure becomes one ModelLoadError naming file and reason.

Weights stored as external data are checked (inside the model's folder, present, long
enough) but never read here, so a 20 GB model opens as fast as its graph. The user's
file is only ever opened for reading.
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError
from onnx import external_data_helper

from onnxstudio.errors import ModelLoadError

TEXT_SUFFIXES = {".onnxtxt", ".onnxtext", ".txt"}
PROTOBUF_LIMIT = 2**31 - 1  # protobuf cannot parse a single message beyond 2 GB
MODEL_FIELDS = {1, 2, 3, 4, 5, 6, 7, 8, 14, 20, 25}  # field numbers of onnx.ModelProto


def read_model_proto(path: str | Path) -> tuple[onnx.ModelProto, bool]:
    """Parse ``path`` (binary or ONNX text format) without loading external weights.

    Returns the proto and whether it keeps any tensor in external data.
    """
    path = Path(path)
    data = _read_bytes(path)
    if path.suffix.lower() in TEXT_SUFFIXES or _looks_like_text(data):
        proto = _parse_text(path, data)
    else:
        proto = _parse_binary(path, data)
    return proto, check_external_data(proto, path)


def _read_bytes(path: Path) -> bytes:
    if not path.exists():
        raise ModelLoadError(path, "file not found")
    if path.is_dir():
        raise ModelLoadError(path, "is a folder, not a model file")
    try:
        size = path.stat().st_size
        if size == 0:
            raise ModelLoadError(path, "the file is empty")
        if size > PROTOBUF_LIMIT:
            raise ModelLoadError(
                path, f"{size / 2**30:.1f} GB in one file: beyond protobuf's 2 GB limit "
                "(large models must keep their weights in external data)")
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ModelLoadError(path, f"cannot be read ({exc.strerror or exc})") from exc


def _looks_like_text(data: bytes) -> bool:
    """ONNX text format starts with '<' (model header) or a graph name and '('."""
    head = data[:256].lstrip()
    if not head or head[:1] != b"<":
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _parse_text(path: Path, data: bytes) -> onnx.ModelProto:
    try:
        return onnx.parser.parse_model(data.decode("utf-8"))
    except (UnicodeDecodeError, onnx.parser.ParseError, Exception) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(path, f"not valid ONNX text format ({first})") from exc


def _parse_binary(path: Path, data: bytes) -> onnx.ModelProto:
    problem = scan_wire_format(data)
    if problem:
        raise ModelLoadError(path, problem)
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except DecodeError as exc:
        raise ModelLoadError(path, f"not an ONNX file (protobuf parse failed: {exc})") from exc
    if not proto.HasField("graph") or proto.ir_version <= 0:
        missing = "no graph" if not proto.HasField("graph") else "no IR version"
        raise ModelLoadError(path, f"not an ONNX model (a protobuf message, but {missing})")
    return proto


def scan_wire_format(data: bytes) -> str | None:
    """Walk the top-level protobuf fields and say what is wrong, or None if they are sound.

    protobuf's own error ("Error parsing message") does not tell a truncated download from
    a file that was never a model; this cheap walk (no copying) does, and names the byte.
    """
    pos, end = 0, len(data)
    while pos < end:
        start = pos
        key, pos = _varint(data, pos)
        if key is None:
            return f"truncated (the file ends inside a field header at byte {start})"
        field, wire = key >> 3, key & 7
        if field == 0 or wire in (6, 7):
            return f"not an ONNX file (protobuf parse failed at byte {start})"
        if wire == 0:
            value, pos = _varint(data, pos)
            if value is None:
                return f"truncated (the file ends inside a number at byte {start})"
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = _varint(data, pos)
            if length is None:
                return f"truncated (the file ends inside a field length at byte {start})"
            if pos + length > end:
                if field in MODEL_FIELDS:  # a model that was cut short
                    return (f"truncated (field at byte {start} needs {length:,} bytes, "
                            f"only {end - pos:,} remain)")
                return f"not an ONNX file (protobuf parse failed at byte {start})"
            pos += length
        else:  # groups (3, 4) are not used by ONNX
            return f"not an ONNX file (protobuf parse failed at byte {start})"
        if pos > end:
            return f"truncated (the file ends inside a field at byte {start})"
    return None


def _varint(data: bytes, pos: int) -> tuple[int | None, int]:
    result = shift = 0
    while pos < len(data) and shift < 70:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
    return None, pos


def check_external_data(proto: onnx.ModelProto, path: Path) -> bool:
    """Refuse external-data locations outside the model's folder, missing or short files.

    Returns whether any tensor uses external data.
    """
    base = path.resolve().parent
    found = False
    for tensor in external_data_helper._get_all_tensors(proto):
        if not external_data_helper.uses_external_data(tensor):
            continue
        found = True
        info = {entry.key: entry.value for entry in tensor.external_data}
        location = info.get("location", "")
        if not location:
            raise ModelLoadError(path, f"tensor '{tensor.name}' has external data with no location")
        target = (base / location).resolve()
        if os.path.isabs(location) or not target.is_relative_to(base):
            raise ModelLoadError(
                path, f"tensor '{tensor.name}' points outside the model's folder "
                f"('{location}'); refusing to read it")
        if not target.is_file():
            raise ModelLoadError(
                path, f"external data file '{location}' for tensor '{tensor.name}' is missing")
        offset = int(info.get("offset", 0) or 0)
        length = info.get("length")
        if length is not None and offset + int(length) > target.stat().st_size:
            raise ModelLoadError(
                path, f"external data file '{location}' is shorter than tensor "
                f"'{tensor.name}' needs (truncated?)")
    return found
