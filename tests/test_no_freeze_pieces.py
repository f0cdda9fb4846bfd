"""Issue 34: big protobuf work on a worker runs in pieces, so the window gets the GIL
between them (an edit session's working copy, the types a child hands back)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from onnxstudio.model import pieces
from onnxstudio.model.pieces import (
    COPY_RUN_RECORDS,
    VALUE_INFO_KEY,
    copy_in_pieces,
    parse_in_pieces,
)
from tests.builders import relu_chain, save


def test_a_model_copied_in_pieces_is_the_model() -> None:
    """An edit session's working copy was one CopyFrom on the worker that opens it,
    holding the GIL for all of the model (dag100k: 22-37 ms of a frozen window while the
    user typed): it is copied a run of records at a time now, and is the same model; a
    model with fields this onnx does not know is copied whole, keeping them."""
    model = relu_chain(3 * COPY_RUN_RECORDS)
    model.doc_string = "a chain"
    onnx.helper.set_model_props(model, {"author": "tests"})
    model.graph.initializer.append(onnx.numpy_helper.from_array(
        np.ones((30, 30), "float32"), "w"))
    model.graph.value_info.extend(onnx.helper.make_tensor_value_info(
        f"v{i}", onnx.TensorProto.FLOAT, [2, 8]) for i in range(1, 50))
    runs: list[int] = []
    copy = copy_in_pieces(model, lambda: runs.append(1))
    assert copy == model and copy.SerializeToString() == model.SerializeToString()
    assert len(runs) >= 3
    unknown = onnx.ModelProto.FromString(model.SerializeToString() + b"\xf8\x7f\x01")
    kept = copy_in_pieces(unknown, lambda: runs.append(1))
    assert kept.SerializeToString() == unknown.SerializeToString()


def test_an_edit_session_opens_with_a_copy_made_in_pieces(monkeypatch,
                                                          tmp_path: Path) -> None:
    """``EditSession.open`` (the prefetch's worker) makes its working copy in pieces,
    handing the GIL over between them: the copy is the original, apart from it (an edit
    changes only the copy)."""
    from onnxstudio.model.edit import EditSession
    from onnxstudio.model.edit import session as session_module

    handed: list[int] = []
    monkeypatch.setattr(session_module, "let_others_run", lambda: handed.append(1))
    path = save(relu_chain(2 * COPY_RUN_RECORDS), tmp_path / "chain.onnx")
    session = EditSession.open(path)
    assert session.current == session.original and len(handed) >= 2
    first = session.current.graph.node[0].name
    session.apply({"op": "rename", "kind": "node", "from": first, "to": "renamed"})
    assert session.current.graph.node[0].name == "renamed"
    assert session.original.graph.node[0].name == first


def _types_only(count: int) -> onnx.ModelProto:
    """A types-only model as a shape-inference child answers: value infos, no nodes."""
    types = onnx.ModelProto()
    types.graph.value_info.extend(onnx.helper.make_tensor_value_info(
        f"/layer.{i}/MatMul_output_0", onnx.TensorProto.FLOAT, ["batch", 128, i])
        for i in range(count))
    return types


def test_the_types_a_child_hands_back_are_parsed_in_pieces(monkeypatch) -> None:
    """The value types an inference child writes (dag100k: 5.8 MB) were parsed in one
    call holding the GIL 28 ms on the worker of an open or an edit: they are cut before
    value-info records and merged a piece at a time, the same model."""
    monkeypatch.setattr(pieces, "MIN_PIECED_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 4096)
    types = _types_only(2000)
    data = types.SerializeToString()
    merged: list[int] = []
    merge = pieces.merge_pieces
    monkeypatch.setattr(pieces, "merge_pieces", lambda model, data, split: (
        merged.append(len(split)), merge(model, data, split)))
    assert parse_in_pieces(onnx.ModelProto(), data, VALUE_INFO_KEY) == types
    assert merged and merged[0] > 10


def test_types_cut_inside_a_record_are_parsed_whole(monkeypatch) -> None:
    """A guessed cut that misses a record boundary makes its piece fail; the types are
    then parsed whole: never a wrong answer."""
    monkeypatch.setattr(pieces, "MIN_PIECED_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 4096)
    monkeypatch.setattr(pieces, "_likely_boundary", lambda data, pos, end, *_: pos + 3)
    types = _types_only(500)
    assert parse_in_pieces(onnx.ModelProto(), types.SerializeToString(),
                           VALUE_INFO_KEY) == types


def test_an_edit_checked_in_a_child_reads_its_types_in_pieces(monkeypatch,
                                                             tmp_path: Path) -> None:
    """The edit check's child (above 2,000 nodes) hands back the edited model's value
    types; the worker reads them in pieces, every value typed as the child inferred."""
    from onnxstudio.runner import edit_check

    monkeypatch.setattr(pieces, "MIN_PIECED_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 4096)
    read: list[bytes] = []
    parse = edit_check.parse_in_pieces
    monkeypatch.setattr(edit_check, "parse_in_pieces", lambda model, data, key: (
        read.append(key), parse(model, data, key))[1])
    model = relu_chain(edit_check.CHILD_NODES + 100)
    path = save(model, tmp_path / "chain.onnx")
    checked = edit_check.checks_isolated(model.SerializeToString(), path)
    assert read == [VALUE_INFO_KEY] and checked.types is not None
    typed = {info.name for info in checked.types.graph.value_info}
    assert {node.output[0] for node in model.graph.node} <= typed


def test_an_opens_inference_child_hands_back_types_read_in_pieces(monkeypatch,
                                                                   tmp_path: Path) -> None:
    """The open's shape inference child (above 400 nodes) answers with the value types,
    which the open's worker reads in pieces: each inferred value has its type."""
    from onnxstudio.model.infer_child import ChildInference

    monkeypatch.setattr(pieces, "MIN_PIECED_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 4096)
    merged: list[int] = []
    merge = pieces.merge_pieces
    monkeypatch.setattr(pieces, "merge_pieces", lambda model, data, split: (
        merged.append(len(split)), merge(model, data, split)))
    model = relu_chain(600)
    types, problem = ChildInference(save(model, tmp_path / "chain.onnx")).result()
    assert problem is None and types is not None and merged and merged[0] > 2
    typed = {info.name: info.type.tensor_type.elem_type for info in types.graph.value_info}
    assert all(typed[node.output[0]] == onnx.TensorProto.FLOAT for node in model.graph.node
               if node.output[0] in typed) and len(typed) >= len(model.graph.node) - 1


def test_a_model_serialised_in_pieces_is_copied_once_after_its_runs() -> None:
    """The serialised records were joined whole and then copied again into the model's
    bytes, two calls holding the GIL 15-18 ms each on dag100k: each run is joined as it
    ends, and the runs are copied once, so no more than the records and one copy of
    them are ever held."""
    import tracemalloc

    from onnxstudio.model.pieces import serialise_in_pieces

    model = relu_chain(10)
    model.graph.initializer.extend(onnx.numpy_helper.from_array(
        np.full((128, 128), i, "float32"), f"w{i}") for i in range(64))
    tracemalloc.start()
    try:
        data = serialise_in_pieces(model, lambda: None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert onnx.ModelProto.FromString(data) == model
    assert peak < 2.3 * len(data)


class _Slices(list):  # type: ignore[type-arg]
    """A list that notes the length of every slice taken of it."""

    taken: list[int]

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        got = super().__getitem__(index)
        if isinstance(index, slice):
            self.taken.append(len(got))
        return got


def test_a_filter_over_many_nodes_runs_in_runs() -> None:
    """``Graph.nesting`` (the nodes with bodies: few or none) was one C filter over every
    node, 17-67 ms of a worker's GIL on dag100k while its panels were prepared: it
    filters a run at a time, keeping what the one filter kept."""
    from onnxstudio.concurrency.gil_runs import RUN, filter_in_runs

    items = _Slices(range(3 * RUN + 5))
    items.taken = []
    assert filter_in_runs(lambda i: i % 1000 == 0, items) == list(range(0, 3 * RUN + 5, 1000))
    assert items.taken and max(items.taken) <= RUN


def test_operator_counts_keep_no_key_per_node(tmp_path: Path) -> None:
    """The Model panel's operator counts kept every node's (domain, op) key to the end
    and freed 100k of them in one chain of deallocations (14-20 ms of a worker's GIL on
    dag100k): a run's keys go with the run, and the counts and versions are the same."""
    import tracemalloc

    from onnxstudio.concurrency.gil_runs import RUN
    from onnxstudio.model.open import load_model
    from onnxstudio.model.summary import operator_counts

    nodes = 8 * RUN
    model = load_model(save(relu_chain(nodes), tmp_path / "chain.onnx"))
    tracemalloc.start()
    try:
        counts = operator_counts(model)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(c["op_type"], c["count"]) for c in counts] == [("Relu", nodes)]
    assert counts[0]["since_version"] == model.graph.nodes[0].schema.since_version
    assert peak < nodes * 72 / 2  # a run's keys, not every node's (72 bytes each)
