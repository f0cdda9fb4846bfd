"""Parse a large model in pieces, so that no single call holds the GIL for long.

protobuf's parser is C code that holds the GIL for a whole call: 30–60 ms for a
100k-node graph, and the strict UTF-8 parse (wire.has_invalid_utf8) 50–100 ms more. Run
on a worker while the window waits, each such call is a frozen window. Parsing the
graph's fields in consecutive runs of records and merging them is the same message
(protobuf defines a parse of concatenated bytes as the merge of their parses), but
the parser returns between runs and the window gets its turn.

Where the runs are cut is guessed, not walked (stepping over 100k records in Python
took 70 ms, the guesses 12 ms): a cut goes where the records that follow read soundly
for 16 KB. A wrong guess cannot pass unnoticed: the run before it starts on a record
boundary and would then end inside a record, which protobuf refuses, and
``merge_pieces`` raises. So when every run parses, every cut was a boundary and the
merge is the whole parse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

from onnxstudio.model.wire import _varint

GRAPH_FIELD = 7  # onnx.ModelProto.graph
GRAPH_FIELDS = frozenset({1, 2, 5, 10, 11, 12, 13, 14, 15, 16})  # all length-delimited
NODE_KEY = b"\x0a"  # GraphProto.node, the record a cut looks for
VALUE_INFO_KEY = b"\x6a"  # GraphProto.value_info: the records of a types-only model
NODE_KEYS = frozenset(field << 3 | 2 for field in range(1, 10))  # NodeProto's (all strings)
PIECE_BYTES = 256 * 1024  # ~1–3 ms of parsing each
SEARCH_BYTES = 64 * 1024  # how far past a piece's size a cut is looked for
SETTLE_BYTES = 16 * 1024  # how far records must read soundly from a cut,
SETTLE_RECORDS = 8  # and how many (a stray key in raw tensor data may skip far)
MIN_PIECED_BYTES = 4 * 1024 * 1024  # below this a whole parse is short enough

M = TypeVar("M", bound=Message)
Pieces = list[tuple[bool, int, int]]
"""Byte spans of a serialised ModelProto in file order, each with whether it is a run of
the graph's records (a GraphProto on its own) or whole top-level records (a ModelProto)."""


def model_pieces(data: bytes, record_key: bytes = NODE_KEY) -> Pieces | None:
    """How to parse ``data`` in pieces, cut before graph records keyed ``record_key``;
    None when it is small or not laid out soundly (then a whole parse also gives
    protobuf's own error)."""
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
            pieces += ((True, a, b) for a, b in _runs(data, pos, pos + length, record_key))
            pos += length
        else:
            pos = _skip(data, start)
            if not 0 < pos <= end:
                return None
            pieces.append((False, start, pos))
    return pieces if any(in_graph for in_graph, _, _ in pieces) else None


def _runs(data: bytes, pos: int, end: int, record_key: bytes) -> list[tuple[int, int]]:
    """data[pos:end] (a GraphProto's fields) cut into runs of about PIECE_BYTES."""
    runs: list[tuple[int, int]] = []
    first = pos
    while end - first > 2 * PIECE_BYTES:
        cut = _likely_boundary(data, first + PIECE_BYTES, end, record_key)
        if cut < 0:
            break
        runs.append((first, cut))
        first = cut
    runs.append((first, end))
    return runs


def _likely_boundary(data: bytes, pos: int, end: int, record_key: bytes = NODE_KEY) -> int:
    """The first ``record_key`` at or after ``pos`` from which graph records read soundly for
    SETTLE_BYTES and SETTLE_RECORDS (or up to ``end``); -1 if none within SEARCH_BYTES.
    Reading that far leaves the nodes of a body nested in an attribute (they look like
    the graph's own), unless the body is larger: then the merge fails and the file is
    parsed whole."""
    limit = min(end, pos + SEARCH_BYTES)
    while True:
        pos = data.find(record_key, pos, limit)
        if pos < 0:
            return -1
        length, content = _varint(data, pos + 1)
        if length and content < end and data[content] not in NODE_KEYS:
            pos += 1  # what follows is no NodeProto (e.g. a name inside a node)
            continue
        at, settled, records = pos, min(end, pos + SETTLE_BYTES), 0
        while 0 <= at < end and (at < settled or records < SETTLE_RECORDS):
            key = data[at]
            at = _skip(data, at) if key >> 3 in GRAPH_FIELDS and key & 7 == 2 else -1
            records += 1
        if at == end or settled <= at < end:
            return pos
        pos += 1


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
        return -1 if length is None or pos + length > len(data) else pos + length
    return -1  # groups: not used by ONNX


def merge_pieces(model: Message, data: bytes, pieces: Pieces) -> None:
    """Parse ``data`` into the empty ``model`` piece by piece; raises DecodeError if a
    piece does not parse (a cut that missed a boundary, or a damaged file)."""
    view = memoryview(data)
    graph = model.graph
    for in_graph, start, end in pieces:
        (graph if in_graph else model).MergeFromString(view[start:end])


def parse_in_pieces(model: M, data: bytes, record_key: bytes = NODE_KEY) -> M:
    """``data`` parsed into the empty ``model``, in pieces cut before ``record_key``
    records when it is large (whole when a cut was missed). ``VALUE_INFO_KEY`` cuts the
    types-only model an inference child answers with: dag100k's 5.8 MB held the GIL
    28 ms in one parse, on the worker of an open or an edit."""
    pieces = model_pieces(data, record_key)
    if pieces is not None:
        try:
            merge_pieces(model, data, pieces)
            return model
        except DecodeError:
            model.Clear()
    model.ParseFromString(data)
    return model


SERIALISE_RUN_BYTES = 256 * 1024  # records serialised between two calls of ``between``
_GRAPH_RUNS = ("node", "initializer", "value_info")  # GraphProto's long repeated fields


def serialise_in_pieces(model: Message, between: Callable[[], None]) -> bytes:
    """Bytes that parse as ``model`` (``model.SerializeToString()`` in another field
    order), made record by record with ``between()`` called every ~256 KB: one call
    held the GIL for all of a model (BERT-96: 11-27 ms, on the GUI thread when an edit
    was checked). A record changed meanwhile may or may not be in it: the caller takes
    it when nothing changes the model, or drops it."""
    graph = model.graph
    head, rest = type(model)(), type(graph)()
    for field, value in model.ListFields():
        if field.name != "graph":
            _copy_field(head, field, value)
    for field, value in graph.ListFields():
        if field.name not in _GRAPH_RUNS:
            _copy_field(rest, field, value)
    # Each run's records are joined as it ends: one join of all of dag100k's 300k parts
    # held the GIL 15-18 ms; the runs' ~60 joined bytes are copied once, at the end.
    runs, size = [rest.SerializeToString()], 0
    parts: list[bytes] = []
    for name in _GRAPH_RUNS:
        key = bytes([graph.DESCRIPTOR.fields_by_name[name].number << 3 | 2])
        for record in getattr(graph, name):
            data = record.SerializeToString()
            parts += (key, _encode_varint(len(data)), data)
            size += len(data)
            if size >= SERIALISE_RUN_BYTES:
                runs.append(b"".join(parts))
                parts, size = [], 0
                between()
    runs.append(b"".join(parts))
    return b"".join((head.SerializeToString(), bytes([GRAPH_FIELD << 3 | 2]),
                     _encode_varint(sum(map(len, runs))), *runs))


COPY_RUN_RECORDS = 1024  # records copied between two calls of ``between``


def copy_in_pieces(model: Message, between: Callable[[], None]) -> Message:
    """A copy of ``model``, as ``CopyFrom`` makes it, with the graph's long lists copied
    a run of records at a time and ``between()`` called between runs: one CopyFrom held
    the GIL for all of a model (dag100k: 22-37 ms on the worker opening an edit
    session, a frozen window while the user typed). Unknown fields on the model or its
    graph (which a field-by-field copy would drop) make it one CopyFrom."""
    copy = type(model)()
    graph = model.graph
    if len(UnknownFieldSet(model)) or len(UnknownFieldSet(graph)):
        copy.CopyFrom(model)
        return copy
    for field, value in model.ListFields():
        if field.name != "graph":
            _copy_field(copy, field, value)
    if not model.HasField("graph"):
        return copy
    target = copy.graph
    target.SetInParent()  # an empty graph is still a graph
    for field, value in graph.ListFields():
        if field.name not in _GRAPH_RUNS:
            _copy_field(target, field, value)
            continue
        records = getattr(target, field.name)
        for start in range(0, len(value), COPY_RUN_RECORDS):
            records.extend(value[start:start + COPY_RUN_RECORDS])
            between()
    return copy


def _copy_field(target: Message, field: Any, value: Any) -> None:
    repeated = getattr(field, "is_repeated", None)  # protobuf 6; ``label`` before
    if field.label == field.LABEL_REPEATED if repeated is None else repeated:
        getattr(target, field.name).extend(value)
    elif field.message_type is not None:
        getattr(target, field.name).CopyFrom(value)
    else:
        setattr(target, field.name, value)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
