"""Protobuf wire-level checks that protobuf's own parser does not explain.

protobuf says "Error parsing message" for a truncated download, a file that was never a
model and a model that nests too deeply alike, and (in Python, for proto2) hands invalid
UTF-8 back as ``bytes`` where every other name is ``str``. These cheap checks tell the
cases apart and repair the names, so the rest of the app only ever sees text.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from google.protobuf.message import DecodeError, Message

from onnxstudio.model.onnx_core import ModelProto

if TYPE_CHECKING:
    from onnxstudio.model.pieces import Pieces

MODEL_FIELDS = {1, 2, 3, 4, 5, 6, 7, 8, 14, 20, 25}  # field numbers of onnx.ModelProto
# protobuf refuses messages nested deeper than this (its default recursion limit).
PROTOBUF_DEPTH = 100


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
        if field == 0 or wire in (3, 4, 6, 7):  # groups (3, 4) are not used by ONNX
            return f"not an ONNX file (protobuf parse failed at byte {start})"
        if wire == 0:
            value, pos = _varint(data, pos)
            if value is None:
                return f"truncated (the file ends inside a number at byte {start})"
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            length, pos = _varint(data, pos)
            if length is None:
                return f"truncated (the file ends inside a field length at byte {start})"
            if pos + length > end:
                if field in MODEL_FIELDS:  # a model that was cut short
                    return (f"truncated (field at byte {start} needs {length:,} bytes, "
                            f"only {end - pos:,} remain)")
                return f"not an ONNX file (protobuf parse failed at byte {start})"
            pos += length
        if pos > end:
            return f"truncated (the file ends inside a field at byte {start})"
    return None


def _varint(data: bytes | memoryview, pos: int) -> tuple[int | None, int]:
    result = shift = 0
    while pos < len(data) and shift < 70:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
    return None, pos


def nests_too_deeply(data: bytes, limit: int = PROTOBUF_DEPTH) -> bool:
    """Whether ``data`` holds messages nested deeper than ``limit`` (read on a parse failure).

    Every length-delimited field that reads as a sound message is followed down; only
    the deepest chain counts, and the walk stops as soon as it passes ``limit``.
    """
    view = memoryview(data)
    stack = [(0, len(view), 0)]
    while stack:
        start, end, depth = stack.pop()
        if depth > limit:
            return True
        children = _message_children(view, start, end)
        if children is not None:
            stack.extend((s, e, depth + 1) for s, e in children)
    return False


def _message_children(view: memoryview, pos: int, end: int) -> list[tuple[int, int]] | None:
    """Spans of the length-delimited fields of the message in view[pos:end], or None when
    those bytes are not a sound message (then they are a string or raw data)."""
    children: list[tuple[int, int]] = []
    while pos < end:
        key, pos = _varint(view, pos)
        if key is None or key >> 3 == 0:
            return None
        wire = key & 7
        if wire == 0:
            value, pos = _varint(view, pos)
            if value is None:
                return None
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        elif wire == 2:
            length, pos = _varint(view, pos)
            if length is None or pos + length > end:
                return None
            if length:
                children.append((pos, pos + length))
            pos += length
        else:
            return None
    return children if pos == end else None


@functools.cache
def _strict_classes() -> tuple[Any, Any]:
    """onnx.ModelProto and GraphProto as an editions file whose string fields must be
    valid UTF-8.

    Parsing with it costs what one normal parse costs and fails exactly when some name,
    type or metadata string is not UTF-8: the cheap test before the slow repair.
    """
    # imported here: a CLI export's inference fork asks this, not the export itself
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto()
    ModelProto.DESCRIPTOR.file.CopyToProto(fdp)
    fdp.syntax = "editions"
    fdp.edition = descriptor_pb2.EDITION_2023
    features = fdp.options.features
    features.field_presence = descriptor_pb2.FeatureSet.EXPLICIT
    features.enum_type = descriptor_pb2.FeatureSet.CLOSED
    features.repeated_field_encoding = descriptor_pb2.FeatureSet.EXPANDED
    features.utf8_validation = descriptor_pb2.FeatureSet.VERIFY
    features.message_encoding = descriptor_pb2.FeatureSet.LENGTH_PREFIXED
    features.json_format = descriptor_pb2.FeatureSet.LEGACY_BEST_EFFORT
    pending = list(fdp.message_type)
    while pending:
        message = pending.pop()
        pending.extend(message.nested_type)
        for field in message.field:
            field.options.ClearField("packed")  # a proto2 option editions spell otherwise
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return tuple(message_factory.GetMessageClass(pool.FindMessageTypeByName(f"onnx.{name}"))
                 for name in ("ModelProto", "GraphProto"))


def has_invalid_utf8(data: bytes, pieces: Pieces | None = None) -> bool:
    """Whether some string field of the serialised model is not valid UTF-8 (parsed in
    ``pieces`` when given: see pieces.py)."""
    model_class, graph_class = _strict_classes()
    try:
        if pieces is None:
            model_class.FromString(data)
        else:
            view = memoryview(data)
            for in_graph, start, end in pieces:
                (graph_class if in_graph else model_class).FromString(view[start:end])
    except DecodeError as exc:
        return "UTF-8" in str(exc)
    except Exception:  # a protobuf without editions support: fall back to the walk
        return True
    return False


def repair_utf8(message: Message) -> int:
    """Replace invalid UTF-8 in every string field by U+FFFD, in place; returns how many.

    protobuf's Python API returns such strings as ``bytes``, which breaks every caller
    that joins, splits or prints names.
    """
    fixed = 0
    for field, value in message.ListFields():
        repeated = getattr(field, "is_repeated", None)
        if repeated is None:
            repeated = field.label == field.LABEL_REPEATED
        if field.type == field.TYPE_STRING:
            if repeated:
                for i, item in enumerate(value):
                    if isinstance(item, bytes):
                        value[i] = item.decode("utf-8", "replace")
                        fixed += 1
            elif isinstance(value, bytes):
                setattr(message, field.name, value.decode("utf-8", "replace"))
                fixed += 1
        elif field.type == field.TYPE_MESSAGE:
            for item in value if repeated else [value]:
                fixed += repair_utf8(item)
    return fixed
