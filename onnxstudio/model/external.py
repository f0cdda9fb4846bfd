"""Check every external-data reference of a model before anything (onnx, onnxruntime) reads it.

A model names its weight files itself, so a hostile model can name ``/etc/passwd``, a
symlink out of its folder, a FIFO that blocks the reader forever, a device, or onnxruntime's
in-memory address tag. The rule, the same for the window and every command: external data
is a regular file inside the model's folder, and offset/length are integers within it.
The folder is the one onnxruntime uses: that of the path as given, so a symlinked model
reads next to the link, not next to its target.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from onnxstudio.errors import ModelLoadError
from onnxstudio.model.onnx_core import TensorProto

if TYPE_CHECKING:
    import onnx

# onnxruntime reads "offset" bytes of its own memory for this location: never from a file.
ORT_MEMORY_TAG = "*/_ORT_MEM_ADDR_/*"
KNOWN_KEYS = {"location", "offset", "length", "checksum", "basepath"}


def model_folder(path: str | Path) -> Path:
    """The folder external data resolves against: the link's, as onnxruntime does."""
    return Path(os.path.abspath(path)).parent


def _graph_tensors(graph: onnx.GraphProto, where: str) -> Iterator[tuple[str, onnx.TensorProto]]:
    for tensor in graph.initializer:
        yield f"initializer '{tensor.name}'", tensor
    for sparse in graph.sparse_initializer:
        yield f"sparse initializer '{sparse.values.name}'", sparse.values
        yield f"sparse initializer '{sparse.values.name}' (indices)", sparse.indices
    yield from _node_tensors(graph.node, where)


def _node_tensors(nodes: object, where: str) -> Iterator[tuple[str, onnx.TensorProto]]:
    for node in nodes:  # type: ignore[attr-defined]
        label = f"node '{node.name or node.op_type}'{where}"
        for attr in node.attribute:
            if attr.HasField("t"):
                yield label, attr.t
            for t in attr.tensors:
                yield label, t
            if attr.HasField("sparse_tensor"):
                yield label, attr.sparse_tensor.values
                yield label, attr.sparse_tensor.indices
            for st in attr.sparse_tensors:
                yield label, st.values
                yield label, st.indices
            if attr.HasField("g"):
                yield from _graph_tensors(attr.g, f" (in the body of {label})")
            for g in attr.graphs:
                yield from _graph_tensors(g, f" (in the body of {label})")


def all_tensors(proto: onnx.ModelProto) -> Iterator[tuple[str, onnx.TensorProto]]:
    """(where, tensor) for every tensor a model holds: initializers, sparse initializers,
    attribute tensors (Constant nodes), If/Loop/Scan bodies and local functions."""
    yield from _graph_tensors(proto.graph, "")
    for function in proto.functions:
        yield from _node_tensors(function.node, f" (in function '{function.name}')")


def tensors_of(proto: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every tensor of ``all_tensors``: what onnx's private ``_get_all_tensors`` walks, and
    sparse ones too, without depending on an onnx internal."""
    return (tensor for _, tensor in all_tensors(proto))


def may_use_external_data(data: bytes) -> bool:
    """False when no tensor can name a file: every location is a literal "location" key.

    Lets a 100k-node model skip the Python walk over all its attributes.
    """
    return b"location" in data


def _integer(path: Path, where: str, key: str, text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ModelLoadError(path, f"{where}: external data {key} {text!r} is not a "
                             "non-negative integer")
    return int(text)


def check_tensor(path: Path, folder: Path, where: str, tensor: onnx.TensorProto) -> None:
    """Refuse one external reference that is not a regular file inside ``folder``."""
    info: dict[str, str] = {}
    for entry in tensor.external_data:
        if entry.key in info:
            raise ModelLoadError(path, f"{where}: external data key '{entry.key}' given twice")
        info[entry.key] = entry.value
    unknown = sorted(set(info) - KNOWN_KEYS)
    if unknown:
        raise ModelLoadError(path, f"{where}: unknown external data key '{unknown[0]}'")
    location = info.get("location", "")
    if not location:
        raise ModelLoadError(path, f"{where}: external data with no location")
    shown = location.encode("unicode_escape").decode("ascii")
    if "\x00" in location:
        raise ModelLoadError(path, f"{where}: external data location '{shown}' holds a NUL "
                             "byte; refusing to read it")
    if location == ORT_MEMORY_TAG:
        raise ModelLoadError(path, f"{where}: external data location '{shown}' asks for "
                             "memory, not a file; refusing it")
    real_folder = Path(os.path.realpath(folder))
    target = Path(os.path.realpath(folder / location))
    if os.path.isabs(location) or not target.is_relative_to(real_folder):
        raise ModelLoadError(path, f"{where}: external data '{shown}' lies outside the "
                             "model's folder; refusing to read it")
    try:
        st = os.stat(target)
    except OSError as exc:
        raise ModelLoadError(path, f"external data file '{shown}' for {where} is missing"
                             ) from exc
    if not stat.S_ISREG(st.st_mode):
        raise ModelLoadError(path, f"{where}: external data '{shown}' is not a regular file; "
                             "refusing to read it")
    offset = _integer(path, where, "offset", info.get("offset", "0") or "0")
    length = info.get("length")
    end = offset + (_integer(path, where, "length", length) if length else 0)
    if end > st.st_size:
        raise ModelLoadError(path, f"external data file '{shown}' is shorter than {where} "
                             f"needs ({end:,} bytes, the file has {st.st_size:,}; truncated?)")


def check_external_data(proto: onnx.ModelProto, path: str | Path) -> bool:
    """Check every external reference of ``proto`` (read from ``path``); raise
    ModelLoadError for the first bad one. Returns whether any tensor uses external data."""
    path = Path(path)
    folder = model_folder(path)
    found = False
    for where, tensor in all_tensors(proto):
        if tensor.data_location == TensorProto.EXTERNAL or len(tensor.external_data):
            found = True
            check_tensor(path, folder, where, tensor)
    return found


def load_external_weights(proto: onnx.ModelProto, path: str | Path) -> None:
    """Read the (already checked) external weights of ``proto`` into it, in place."""
    from onnx import external_data_helper

    try:
        external_data_helper.load_external_data_for_model(proto, str(model_folder(path)))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(path, f"cannot read external data ({exc})") from exc
