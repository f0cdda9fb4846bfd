"""Parse a large model in pieces, so that no single call holds the GIL for long.

protobuf's parser is C code that holds the GIL for a whole call: 30–60 ms for a
100k-node graph, and the strict UTF-8 parse (wire.has_invalid_utf8) 100 ms more. Run on
a worker while the window waits, each such call is a frozen window. Parsing the
graph's fields in consecutive runs of records and merging them is the same message
(protobuf defines a parse of concatenated bytes as the merge of their parses), but
the parser returns between runs and the window gets its turn.
"""

from __future__ import annotations

from google.protobuf.message import Message

from onnxstudio.model.wire import _varint

GRAPH_FIELD = 7  # onnx.ModelProto.graph
PIECE_BYTES = 256 * 1024  # ~1–3 ms of parsing each
MIN_PIECED_BYTES = 4 * 1024 * 1024  # below this a whole parse is short enough


Pieces = list[tuple[bool, int, int]]
"""Byte spans of a serialised ModelProto in file order, each with whether it is a run of
the graph's records (a GraphProto on its own) or whole top-level records (a ModelProto)."""


def model_pieces(data: bytes) -> Pieces | None:
    """How to parse ``data`` in pieces; None when it is small or not laid out soundly
    (then a whole parse also gives protobuf's own error)."""
    if len(data) < MIN_PIECED_BYTES:
        return None
    pieces: Pieces = []
    pos, end = 0, len(data)
    while pos < end:
        start = pos
        key, pos = _varint(data, pos)
        length, pos = _varint(data, pos) if key is not None and key & 7 == 2 else (None, pos)
        if key is not None and key >> 3 == GRAPH_FIELD and length is not None \
                and length >= 2 * PIECE_BYTES and pos + length <= end:
            runs = _runs(data, pos, pos + length)
            if runs is None:
                return None
            pieces += ((True, a, b) for a, b in runs)
            pos += length
        else:
            pos = _skip(data, start)
            if not 0 < pos <= end:
                return None
            pieces.append((False, start, pos))
    return pieces if any(in_graph for in_graph, _, _ in pieces) else None


def _runs(data: bytes, pos: int, end: int) -> list[tuple[int, int]] | None:
    """data[pos:end] (a message's fields) cut between records into runs of about
    PIECE_BYTES. The common record (a one-byte key of a length-delimited field up to
    16 KB long) is stepped over inline."""
    runs: list[tuple[int, int]] = []
    first, mark = pos, pos + PIECE_BYTES
    while pos < end:
        key = data[pos]
        if key < 0x80 and key & 7 == 2 and pos + 2 < end:
            low = data[pos + 1]
            if low < 0x80:
                pos += 2 + low
            elif (high := data[pos + 2]) < 0x80:
                pos += 3 + (low & 0x7F) + (high << 7)
            else:
                pos = _skip(data, pos)
        else:
            pos = _skip(data, pos)
        if pos < 0:
            return None
        if pos >= mark:
            runs.append((first, pos))
            first, mark = pos, pos + PIECE_BYTES
    if pos != end:
        return None
    if first < end:
        runs.append((first, end))
    return runs


def _skip(data: bytes, pos: int) -> int:
    """The end of the record at ``pos``, or -1 when it is not a sound record."""
    key, pos = _varint(data, pos)
    if key is None or key >> 3 == 0:
        return -1
    wire = key & 7
    if wire == 0:
        value, pos = _varint(data, pos)
        return -1 if value is None else pos
    if wire in (1, 5):
        return pos + (8 if wire == 1 else 4)
    if wire == 2:
        length, pos = _varint(data, pos)
        return -1 if length is None else pos + length
    return -1  # groups: not used by ONNX


def merge_pieces(model: Message, data: bytes, pieces: Pieces) -> None:
    """Parse ``data`` into the empty ``model`` piece by piece (raises DecodeError)."""
    view = memoryview(data)
    graph = model.graph
    for in_graph, start, end in pieces:
        (graph if in_graph else model).MergeFromString(view[start:end])

