"""Edit core on real models: each operation, its undo, refusals, checks and safe saving."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from onnxstudio.errors import EditError
from onnxstudio.model.edit import EditSession, load_script
from tests.conftest import ladder_model, shared_model

MNIST = "zoo/mnist/mnist.onnx"
SILERO = "packaged/silero_vad/silero_vad_16k_op15.onnx"
ENCODED = "/model/encoder/3/activation/Relu_output_0"  # read inside the decoder's If


def _session(relative: str) -> EditSession:
    return EditSession.open(shared_model(relative))


def _node(model: onnx.ModelProto, name: str) -> onnx.NodeProto:
    return next(n for n in model.graph.node if n.name == name)


def _run(model: onnx.ModelProto | bytes, feeds: dict[str, np.ndarray]) -> list[Any]:
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)


def _digit() -> dict[str, np.ndarray]:
    return {"Input3": np.random.default_rng(3).random((1, 1, 28, 28), dtype=np.float32)}


def _apply_and_undo(session: EditSession, edit: dict[str, Any]) -> onnx.ModelProto:
    """Apply ``edit``, keep a copy of the result, undo it, and prove the undo is exact."""
    before = session.current.SerializeToString()
    session.apply(edit)
    after = onnx.ModelProto()
    after.CopyFrom(session.current)
    assert session.check().ok, session.check()
    session.undo()
    assert session.current.SerializeToString() == before
    return after


def test_rename_input_output_and_node_and_undo() -> None:
    session = _session(MNIST)
    m = _apply_and_undo(session, {"op": "rename", "kind": "input", "from": "Input3",
                                  "to": "image"})
    assert m.graph.input[0].name == "image"
    assert _node(m, "Convolution28").input[0] == "image"
    m = _apply_and_undo(session, {"op": "rename", "kind": "output",
                                  "from": "Plus214_Output_0", "to": "logits"})
    assert [o.name for o in m.graph.output] == ["logits"]
    assert _node(m, "Plus214").output[0] == "logits"
    m = _apply_and_undo(session, {"op": "rename", "kind": "node", "from": "Times212",
                                  "to": "classifier"})
    assert "classifier" in {n.name for n in m.graph.node}


def test_tensor_rename_follows_readers_into_if_bodies() -> None:
    session = _session(SILERO)
    feeds = {"input": np.random.default_rng(1).standard_normal((1, 512), dtype=np.float32),
             "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}
    expected = _run(session.original, feeds)
    renamed = _apply_and_undo(session, {"op": "rename", "kind": "tensor", "from": ENCODED,
                                        "to": "encoded"})
    text = str(renamed.graph)
    assert ENCODED not in text and text.count('"encoded"') >= 3  # producer + both branches
    for got, want in zip(_run(renamed, feeds), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_set_dim_and_undo() -> None:
    session = _session(MNIST)
    m = _apply_and_undo(session, {"op": "set_dim", "input": "Input3", "axis": 0,
                                  "value": "batch"})
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    with pytest.raises(EditError, match="has no axis 7"):
        session.apply({"op": "set_dim", "input": "Input3", "axis": 7, "value": 1})


def test_batch_dim_fix_then_runs_in_onnxruntime() -> None:
    session = EditSession.open(shared_model("packaged/magika/standard_v3_3/model.onnx"))
    session.apply({"op": "set_dim", "input": "bytes", "axis": 0, "value": 1})
    assert session.check().ok
    ort_session = ort.InferenceSession(session.model_bytes(),
                                       providers=["CPUExecutionProvider"])
    assert ort_session.get_inputs()[0].shape == [1, 2048]
    (scores,) = ort_session.run(["target_label"], {"bytes": np.zeros((1, 2048), np.int32)})
    assert scores.shape == (1, 214)
    with pytest.raises(Exception, match="Expected: 1"):  # the fixed batch is enforced
        ort_session.run(None, {"bytes": np.zeros((2, 2048), np.int32)})


def test_remove_node_bypasses_and_undo() -> None:
    session = _session(MNIST)
    m = _apply_and_undo(session, {"op": "remove_node", "node": "ReLU32"})
    assert "ReLU32" not in {n.name for n in m.graph.node}
    assert _node(m, "Pooling66").input[0] == "Plus30_Output_0"


def test_removing_the_last_node_keeps_the_output_name() -> None:
    """Dropping the final bias Add: the MatMul now makes the output, under its old name."""
    session = _session(MNIST)
    full = _run(session.original, _digit())[0]
    bias = onnx.numpy_helper.to_array(next(t for t in session.original.graph.initializer
                                           if t.name == "Parameter194"))
    m = _apply_and_undo(session, {"op": "remove_node", "node": "Plus214"})
    assert [o.name for o in m.graph.output] == ["Plus214_Output_0"]
    assert _node(m, "Times212").output[0] == "Plus214_Output_0"
    np.testing.assert_allclose(_run(m, _digit())[0] + bias, full, rtol=1e-5, atol=1e-5)


def test_refused_removal_says_why_and_changes_nothing() -> None:
    session = _session(MNIST)
    before = session.current.SerializeToString()
    with pytest.raises(EditError, match=r"'Times212' \(MatMul\) has 2 data inputs"):
        session.apply({"op": "remove_node", "node": "Times212"})
    assert session.current.SerializeToString() == before and session.steps == []


def test_set_attribute_is_typed_by_the_schema() -> None:
    session = _session(MNIST)
    m = _apply_and_undo(session, {"op": "set_attribute", "node": "Convolution28",
                                  "name": "strides", "value": [2, 2]})
    strides = next(a for a in _node(m, "Convolution28").attribute if a.name == "strides")
    assert strides.type == onnx.AttributeProto.INTS and list(strides.ints) == [2, 2]
    with pytest.raises(EditError, match="kernel_shape takes ints, not 'x'"):
        session.apply({"op": "set_attribute", "node": "Convolution28",
                       "name": "kernel_shape", "value": "x"})
    with pytest.raises(EditError, match="Conv has no attribute 'alpha'"):
        session.apply({"op": "set_attribute", "node": "Convolution28", "name": "alpha",
                       "value": 1.0})


def test_add_node_and_output_and_undo() -> None:
    session = _session(MNIST)
    session.apply({"op": "add_node", "name": "leaky", "op_type": "LeakyRelu",
                   "inputs": ["Plus30_Output_0"], "outputs": ["leaky_out"],
                   "attributes": {"alpha": 0.25}})
    session.apply({"op": "add_output", "tensor": "leaky_out"})
    assert session.check().ok
    logits, leaky = _run(session.current, _digit())
    assert leaky.shape == (1, 8, 28, 28) and logits.shape == (1, 10)
    session.undo()
    session.undo()
    assert session.current.SerializeToString() == session.original.SerializeToString()


def test_added_output_equals_the_captured_intermediate() -> None:
    from onnxstudio.runner.intermediates import capture_feeds
    from onnxstudio.runner.session import SessionConfig

    path = shared_model(MNIST)
    session = EditSession.open(path)
    session.apply({"op": "add_output", "tensor": "Pooling66_Output_0"})
    _logits, pooled = _run(session.model_bytes(), _digit())
    captured = capture_feeds(path, session.original, _digit(), ["Pooling66_Output_0"],
                             SessionConfig(optimization="disable"))
    np.testing.assert_array_equal(pooled, captured.values["Pooling66_Output_0"])


def test_metadata_set_remove_and_undo() -> None:
    session = _session(MNIST)
    m = _apply_and_undo(session, {"op": "set_metadata", "key": "author", "value": "me"})
    assert {p.key: p.value for p in m.metadata_props} == {"author": "me"}
    session.apply({"op": "set_metadata", "key": "author", "value": "me"})
    m = _apply_and_undo(session, {"op": "set_metadata", "key": "author", "value": None})
    assert not m.metadata_props


def test_set_initializer_from_npy(tmp_path: Path) -> None:
    session = _session(MNIST)
    zeros = tmp_path / "bias.npy"
    np.save(zeros, np.zeros((1, 10), np.float32))
    m = _apply_and_undo(session, {"op": "set_initializer", "name": "Parameter194",
                                  "npy": str(zeros)})
    without_bias = _run(m, _digit())[0]
    assert not np.allclose(without_bias, _run(session.original, _digit())[0])
    np.save(tmp_path / "f64.npy", np.zeros((1, 10), np.float64))
    with pytest.raises(EditError, match="holds float64, but 'Parameter194' is float32"):
        session.apply({"op": "set_initializer", "name": "Parameter194",
                       "npy": str(tmp_path / "f64.npy")})
    np.save(tmp_path / "k3.npy", np.zeros((8, 1, 3, 3), np.float32))
    with pytest.raises(EditError, match=r"'Parameter5' cannot become \[8, 1, 3, 3\]"):
        session.apply({"op": "set_initializer", "name": "Parameter5",
                       "npy": str(tmp_path / "k3.npy")})
    assert session.position == 0 and len(session.steps) == 1  # only the undone edit


def test_undo_redo_and_a_new_edit_drops_the_redo_tail() -> None:
    session = _session(MNIST)
    session.apply({"op": "rename", "kind": "input", "from": "Input3", "to": "a"})
    session.apply({"op": "rename", "kind": "input", "from": "a", "to": "b"})
    session.undo()
    assert session.modified and session.current.graph.input[0].name == "a"
    session.redo()
    assert session.current.graph.input[0].name == "b"
    session.undo()
    session.apply({"op": "set_metadata", "key": "k", "value": "v"})
    assert [s.label for s in session.steps] == ["Rename input Input3 → a", "Set metadata k"]
    assert session.redo() is None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_external_data_is_rewritten_beside_the_new_file(tmp_path: Path) -> None:
    source = ladder_model("hf_bert12_dynamo.onnx")
    data = source.with_name(source.name + ".data")
    before = (_digest(source), _digest(data))
    session = EditSession.open(source)
    session.apply({"op": "set_metadata", "key": "edited", "value": "yes"})
    assert session.check().ok
    saved = session.save(tmp_path / "bert.onnx")
    assert saved.data_path == tmp_path / "bert.onnx.data"
    proto = onnx.load(str(saved.path), load_external_data=False)
    locations = {e.value for t in proto.graph.initializer for e in t.external_data
                 if e.key == "location"}
    assert locations == {"bert.onnx.data"}
    onnx.checker.check_model(str(saved.path))
    assert (_digest(source), _digest(data)) == before
    feeds = {"input_ids": np.ones((1, 16), np.int64), "attention_mask": np.ones((1, 16),
                                                                               np.int64)}
    want = ort.InferenceSession(str(source)).run(None, feeds)
    got = ort.InferenceSession(str(saved.path)).run(None, feeds)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def test_save_refuses_the_original_and_its_data(tmp_path: Path) -> None:
    source = ladder_model("hf_bert12_dynamo.onnx")
    session = EditSession.open(source)
    with pytest.raises(EditError, match="refusing to write over"):
        session.save(source)
    with pytest.raises(EditError, match="refusing to write over"):
        session.save(source.with_name("hf_bert12_dynamo.onnx.data"))


def test_check_error_refuses_the_save(tmp_path: Path) -> None:
    session = _session(MNIST)
    session.apply({"op": "add_node", "op_type": "Add", "outputs": ["sum"],  # float + int64
                   "inputs": ["Input3", "Pooling160_Output_0_reshape0_shape"]})
    report = session.check()
    assert not report.ok and "shape inference" in report.errors[0]
    with pytest.raises(EditError, match="not saved: shape inference"):
        session.save(tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()


def test_script_replays_to_identical_bytes(tmp_path: Path) -> None:
    path = shared_model(MNIST)
    session = EditSession.open(path)
    session.apply({"op": "rename", "kind": "input", "from": "Input3", "to": "image"})
    session.apply({"op": "remove_node", "node": "ReLU32"})
    session.undo()
    session.apply({"op": "add_output", "tensor": "Pooling66_Output_0"})
    session.apply({"op": "set_metadata", "key": "k", "value": "v"})
    session.save(tmp_path / "window.onnx")
    (tmp_path / "edits.json").write_text(session.script())
    replay = EditSession.open(path)
    replay.apply_all(load_script(tmp_path / "edits.json"))
    replay.save(tmp_path / "headless.onnx")
    assert (tmp_path / "window.onnx").read_bytes() == (tmp_path / "headless.onnx").read_bytes()


def test_capture_and_profile_run_the_edited_copy() -> None:
    """The Run panel's tools see the model as edited: a node only the edit added."""
    from onnxstudio.runner.intermediates import capture
    from onnxstudio.runner.pipeline import RunRequest
    from onnxstudio.runner.profile import profile

    path = shared_model(MNIST)
    session = EditSession.open(path)
    session.apply({"op": "add_node", "name": "leaky", "op_type": "LeakyRelu",
                   "inputs": ["Plus30_Output_0"], "outputs": ["leaky_out"]})
    request = RunRequest(path, random=True, model_bytes=session.model_bytes())
    captured = capture(request, ["leaky_out"])
    assert captured.values["leaky_out"].shape == (1, 8, 28, 28)
    timed = profile(request)
    assert "leaky" in {n.name for n in timed.nodes}


def test_compare_runs_the_edited_copy_and_pairs_it_with_the_file(tmp_path: Path) -> None:
    """Side A is the model as edited; against the file itself, the changed weight is where
    the two part ways."""
    from onnxstudio.runner.compare import compare, parse_config
    from onnxstudio.runner.pipeline import RunRequest

    path = shared_model(MNIST)
    session = EditSession.open(path)
    conv = next(n for n in session.current.graph.node if n.op_type == "Conv")
    weight = next(t for t in session.current.graph.initializer if t.name == conv.input[1])
    np.save(tmp_path / "w.npy", onnx.numpy_helper.to_array(weight) * 1.5)
    session.apply({"op": "set_initializer", "name": weight.name, "npy": str(tmp_path / "w.npy")})
    request = RunRequest(path, random=True, model_bytes=session.model_bytes())
    cpu = parse_config("ort:cpu:disabled")
    same = compare(request, cpu, cpu)
    assert same.first_divergence is None
    against_file = compare(request, cpu, cpu, model_b=path)
    assert against_file.first_divergence is not None
    assert against_file.first_divergence.name == conv.name


def _relu_chain(tmp_path: Path) -> Path:
    """Six Relus, two of them unnamed (exporters leave names empty)."""
    names = ["a", "b", "", "c", "", "d"]
    nodes = [onnx.helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=name)
             for i, name in enumerate(names)]
    vi = onnx.helper.make_tensor_value_info
    graph = onnx.helper.make_graph(nodes, "chain", [vi("v0", onnx.TensorProto.FLOAT, [2])],
                                   [vi("v6", onnx.TensorProto.FLOAT, [2])])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "chain.onnx"
    onnx.save(model, path)
    return path


def test_the_sessions_node_index_finds_what_a_walk_finds(tmp_path: Path) -> None:
    """The session finds nodes through an index kept true by its edits (a walk of dag100k's
    node list on the GUI thread took 30 ms per look-up): after renames, a refused rename,
    an added and a removed node, undo and redo, every look-up agrees with a walk. Undoing
    the rename of an unnamed node gives it back no name (it became "#2" before)."""
    session = EditSession.open(_relu_chain(tmp_path))

    def walk(name: str) -> int | None:
        return next((i for i, n in enumerate(session.current.graph.node) if n.name == name),
                    None)

    def agrees() -> None:
        for name in ("a", "b", "c", "d", "x", "y", "z", "b2"):
            rename = {"op": "rename", "kind": "node", "from": name, "to": "probe"}
            if walk(name) is None or walk("probe") is not None:
                continue
            session.apply(rename)  # found where a walk finds it, renamed, then back
            assert session.current.graph.node[walk("probe") or 0].name == "probe"
            session.undo()
            assert walk(name) is not None and walk("probe") is None

    edits: list[dict[str, Any]] = [
        {"op": "rename", "kind": "node", "from": "a", "to": "x"},
        {"op": "rename", "kind": "node", "from": "b", "to": "a"},  # "a" is free again
        {"op": "rename", "kind": "node", "from": "#2", "to": "b2"},  # unnamed
        {"op": "add_node", "name": "y", "op_type": "Relu", "inputs": ["v6"],
         "outputs": ["w"]},
        {"op": "rename", "kind": "node", "from": "y", "to": "z"},
        {"op": "remove_node", "node": "c"},
    ]
    for edit in edits:
        session.apply(edit)
        agrees()
    assert [n.name for n in session.current.graph.node] == ["x", "a", "b2", "", "d", "z"]
    with pytest.raises(EditError, match="a node named 'x' already exists"):
        session.apply({"op": "rename", "kind": "node", "from": "a", "to": "x"})
    for _ in edits:
        session.undo()
    assert session.current.SerializeToString() == session.original.SerializeToString()
    for _ in edits:
        session.redo()
    assert [n.name for n in session.current.graph.node] == ["x", "a", "b2", "", "d", "z"]
    agrees()
