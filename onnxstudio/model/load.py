"""Open a model file safely: every failure becomes one ModelLoadError naming file and reason.

This is the one loader: the window, every command and every onnxruntime session read a
model through ``read_model_proto``. Weights stored as external data are checked (a
regular file inside the model's folder, offset and length within it; see external.py)
but never read here, so a 20 GB model opens as fast as its graph. Names that are not
valid UTF-8 are repaired, opset versions checked. The user's file is only ever opened
for reading.
"""

from __future__ import annotations

import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError

from onnxstudio.errors import ModelLoadError
from onnxstudio.model.external import check_external_data, may_use_external_data
from onnxstudio.model.onnx_core import ModelProto
from onnxstudio.model.pieces import Pieces, merge_pieces, model_pieces
from onnxstudio.model.wire import (
    PROTOBUF_DEPTH,
    has_invalid_utf8,
    nests_too_deeply,
    repair_utf8,
    scan_wire_format,
)

if TYPE_CHECKING:
    import onnx

TEXT_SUFFIXES = {".onnxtxt", ".onnxtext", ".txt"}
PROTOBUF_LIMIT = 2**31 - 1  # protobuf cannot parse a single message beyond 2 GB
OPSET_LIMIT = 2**31 - 1  # onnx and onnxruntime keep opset versions in a C int


def byte_checks(data: bytes, pieces: Pieces | None = None) -> tuple[bool, bool]:
    """What the loader asks of a binary model's bytes besides parsing them: whether some
    string is not UTF-8 (parsed in ``pieces`` when given), and whether a tensor may name
    an external file."""
    return has_invalid_utf8(data, pieces), may_use_external_data(data)


# byte_checks, or who answers them for this file (a CLI export's inference fork, which
# reads the file too: BERT-96's 24 ms of them off this process' path).
ByteChecks = Callable[[bytes, "Pieces | None"], tuple[bool, bool]]


def read_model_proto(path: str | Path, checks: ByteChecks = byte_checks
                     ) -> tuple[onnx.ModelProto, bool]:
    """Parse ``path`` (binary or ONNX text format) without loading external weights.

    Returns the proto and whether it keeps any tensor in external data.
    """
    checked = read_checked(path, checks)
    return checked.proto, checked.external


@dataclass(frozen=True)
class CheckedModel:
    """A parsed model whose external data references passed every check."""

    path: Path
    proto: onnx.ModelProto
    external: bool

    def session_bytes(self) -> bytes:
        """What onnxruntime is handed: this checked proto, never the file re-read."""
        return self.proto.SerializeToString()


def read_checked(path: str | Path, checks: ByteChecks = byte_checks) -> CheckedModel:
    """The one loader: read, parse, repair names, check opsets and external data."""
    path = Path(path)
    data = read_bytes(path)
    if is_text(path, data):
        proto = _parse_text(path, data)  # decoded as UTF-8 on the way
        external = may_use_external_data(data)
    else:
        proto, pieces = parse_binary(path, data)
        invalid, external = checks(data, pieces)
        if invalid:
            repair_utf8(proto)
    _check_opsets(path, proto)
    external = external and check_external_data(proto, path)
    return CheckedModel(path, proto, external)


def is_text(path: Path, data: bytes) -> bool:
    """Whether the file is ONNX text format (by its name or its first bytes)."""
    return path.suffix.lower() in TEXT_SUFFIXES or _looks_like_text(data)


def parse_binary(path: Path, data: bytes) -> tuple[onnx.ModelProto, Pieces | None]:
    """The binary model in ``data`` (names not yet repaired), and the pieces it was
    parsed in (None: whole)."""
    # In pieces only off the main thread: a worker's long GIL holds freeze the window,
    # while on the main thread (the CLI, a child process) finding them is pure cost.
    pieces = None if threading.current_thread() is threading.main_thread() \
        else model_pieces(data)
    return _parse_binary(path, data, pieces)


def checked_copy(path: str | Path, data: bytes) -> CheckedModel:
    """Parse an in-memory copy of the model at ``path`` (e.g. edited); its external data
    must pass the same checks as the file's."""
    proto = ModelProto()
    try:
        proto.ParseFromString(data)
    except DecodeError as exc:
        raise ModelLoadError(path, f"not an ONNX model (protobuf parse failed: {exc})"
                             ) from exc
    external = may_use_external_data(data) and check_external_data(proto, path)
    return CheckedModel(Path(path), proto, external)


def check_model_bytes(path: str | Path, data: bytes) -> None:
    """Check an in-memory copy of the model at ``path`` (e.g. with extra outputs) before a
    session gets it (parsed only when it may refer to external data)."""
    if may_use_external_data(data):
        checked_copy(path, data)


def _check_opsets(path: Path, proto: onnx.ModelProto) -> None:
    imports = [(i, "") for i in proto.opset_import]
    imports += [(i, f" (function '{f.name}')") for f in proto.functions for i in f.opset_import]
    for opset, where in imports:
        if not 0 <= opset.version <= OPSET_LIMIT:
            domain = opset.domain or "ai.onnx"
            raise ModelLoadError(path, f"opset version {opset.version} of domain '{domain}'"
                                 f"{where} is out of range (0 to {OPSET_LIMIT})")


def read_bytes(path: Path) -> bytes:
    try:
        st = path.stat()
    except FileNotFoundError as exc:
        raise ModelLoadError(path, "file not found") from exc
    except OSError as exc:
        raise ModelLoadError(path, f"cannot be read ({exc.strerror or exc})") from exc
    if stat.S_ISDIR(st.st_mode):
        raise ModelLoadError(path, "is a folder, not a model file")
    if not stat.S_ISREG(st.st_mode):
        raise ModelLoadError(path, "is not a regular file (a device, pipe or socket)")
    if st.st_size == 0:
        raise ModelLoadError(path, "the file is empty")
    if st.st_size > PROTOBUF_LIMIT:
        raise ModelLoadError(
            path, f"{st.st_size / 2**30:.1f} GB in one file: beyond protobuf's 2 GB limit "
            "(large models must keep their weights in external data)")
    try:
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
    import onnx.parser

    try:
        return onnx.parser.parse_model(data.decode("utf-8"))
    except (UnicodeDecodeError, onnx.parser.ParseError, Exception) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(path, f"not valid ONNX text format ({first})") from exc


def _parse_binary(path: Path, data: bytes, pieces: Pieces | None
                  ) -> tuple[onnx.ModelProto, Pieces | None]:
    """The parsed model, and the pieces it was parsed in (None: it was parsed whole)."""
    problem = scan_wire_format(data)
    if problem:
        raise ModelLoadError(path, problem)
    proto = ModelProto()
    try:
        if pieces is not None:
            try:
                merge_pieces(proto, data, pieces)
            except DecodeError:  # a missed cut or a damaged file: whole, as protobuf says
                proto, pieces = ModelProto(), None
                proto.ParseFromString(data)
        else:
            proto.ParseFromString(data)
    except DecodeError as exc:
        if nests_too_deeply(data):
            raise ModelLoadError(path, "the model nests too deeply (messages inside messages "
                                 f"beyond protobuf's limit of {PROTOBUF_DEPTH})") from exc
        raise ModelLoadError(path, f"not an ONNX file (protobuf parse failed: {exc})") from exc
    if not proto.HasField("graph") or proto.ir_version <= 0:
        missing = "no graph" if not proto.HasField("graph") else "no IR version"
        raise ModelLoadError(path, f"not an ONNX model (a protobuf message, but {missing})")
    return proto, pieces
