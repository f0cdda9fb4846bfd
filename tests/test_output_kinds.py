"""Every output gets a kind from evidence, with the reason, in `run --json` and the window:
a transformer's hidden state is a per-position heatmap (not an image), its pooled vector an
embedding (not classes), logits read as next-token predictions, strings show their values."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from PySide6.QtWidgets import QLabel

from onnxstudio.cli import main
from onnxstudio.ui.insight.run_panel import RunPanel
from tests.builders import make_model, save
from tests.conftest import ladder_model, shared_model

VOCAB = 500


def _text_model(path: Path) -> Path:
    """input_ids[1,16] -> Gather -> LayerNormalization -> hidden[1,16,64];
    ReduceMean over positions -> Tanh -> pooled[1,64]; hidden @ W -> logits[1,16,500];
    and a constant string output."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((VOCAB, 64)).astype(np.float32), "E"),
             numpy_helper.from_array(np.ones(64, np.float32), "g"),
             numpy_helper.from_array(np.zeros(64, np.float32), "b"),
             numpy_helper.from_array(rng.standard_normal((64, VOCAB)).astype(np.float32), "W"),
             numpy_helper.from_array(np.array([1], np.int64), "axis1")]
    words = helper.make_tensor("words", TensorProto.STRING, [3], [b"cat", b"dog", b"tabby"])
    nodes = [helper.make_node("Gather", ["E", "input_ids"], ["emb"]),
             helper.make_node("LayerNormalization", ["emb", "g", "b"], ["hidden"], axis=-1),
             helper.make_node("ReduceMean", ["hidden", "axis1"], ["mean"], keepdims=0),
             helper.make_node("Tanh", ["mean"], ["pooled"]),
             helper.make_node("MatMul", ["hidden", "W"], ["logits"]),
             helper.make_node("Constant", [], ["names"], value=words)]
    graph = helper.make_graph(
        nodes, "text", [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 16])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, 16, 64]),
         helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, 64]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 16, VOCAB]),
         helper.make_tensor_value_info("names", TensorProto.STRING, [3])], inits)
    return save(make_model(graph, opset=18), path)


def _run_json(model: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["run", str(model), *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_text_model_outputs_get_kinds_with_reasons(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    model = _text_model(tmp_path / "text.onnx")
    ids = np.arange(16, dtype=np.int64).reshape(1, 16) * 7 % VOCAB
    np.save(tmp_path / "ids.npy", ids)
    data = _run_json(model, capsys, str(tmp_path / "ids.npy"))
    outs = {o["name"]: o for o in data["outputs"]}
    assert {n: o["kind"] for n, o in outs.items()} == {
        "hidden": "hidden state", "pooled": "embedding", "logits": "token logits",
        "names": "string"}
    assert "LayerNormalization" in outs["hidden"]["kind_reason"]
    assert "Tanh" in outs["pooled"]["kind_reason"]
    assert all(o["kind_reason"] for o in outs.values())
    assert outs["names"]["values"] == ["cat", "dog", "tabby"]
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    _, pooled, logits, _ = session.run(None, {"input_ids": ids})
    assert outs["pooled"]["norm"] == pytest.approx(float(np.linalg.norm(pooled)), rel=1e-5)
    last = logits[0, -1]
    expected = [int(i) for i in np.argsort(-last, kind="stable")[:5]]
    assert [t["token"] for t in outs["logits"]["next_token"]] == expected
    # the pooled vector is not soft-maxed into "classes"; the top list is the next token
    assert [t["index"] for t in data["top"]] == expected


def test_real_transformer_hidden_state_and_pooled_output(
        capsys: pytest.CaptureFixture[str]) -> None:
    data = _run_json(ladder_model("hf_bert12_dynamo.onnx"), capsys, "--random")
    kinds = [o["kind"] for o in data["outputs"]]
    assert kinds == ["hidden state", "embedding"]
    assert data["top"] == []


def test_classifier_and_zipmap_keep_their_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    data = _run_json(shared_model("zoo/mnist/mnist.onnx"), capsys,
                     str(shared_model("images/digit_3.jpg")))
    (out,) = data["outputs"]
    assert out["kind"] == "classification" and data["top"][0]["label"].startswith("3")
    data = _run_json(shared_model("packaged/onnxruntime_datasets/logreg_iris.onnx"), capsys,
                     "--random")
    assert [o["kind"] for o in data["outputs"]] == ["tensor", "sequence"]


@pytest.fixture
def panel(qtbot) -> Iterator[RunPanel]:
    p = RunPanel()
    qtbot.addWidget(p)
    p.resize(900, 1000)
    p.show()
    yield p
    p.shutdown()


def test_window_draws_each_kind_the_way_it_reads(qtbot, panel: RunPanel, tmp_path: Path) -> None:
    panel.set_model(_text_model(tmp_path / "text.onnx"))
    with qtbot.waitSignal(panel.runFinished, timeout=60_000):
        panel.run_random()
    results = panel.results
    table = results.outputs_table
    rows = {table.item(r, 0).text(): (table.item(r, 1).text(), table.item(r, 4).text())
            for r in range(table.rowCount())}
    assert rows["hidden"][0] == "hidden state" and "LayerNormalization" in rows["hidden"][1]
    assert rows["pooled"][0] == "embedding"
    assert "L2 norm" in table.item(1, 2).text()
    heatmap = panel.findChild(QLabel, "output-image:hidden")
    assert heatmap is not None and not heatmap.pixmap().isNull()
    assert results.top_caption.text().startswith("Next-token predictions of logits")
    assert results.top_table.item(0, 0).text().startswith("token ")
    # the string output's values, which nothing else draws
    values = results.values_table
    assert values.isVisible()
    assert [values.item(r, 0).text() for r in range(values.rowCount())] == ["cat", "dog", "tabby"]


def test_sequence_model_with_float_frames_gives_a_hidden_state(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # An audio/sequence encoder: frames[1, 16, 32] -> MatMul -> [1, 16, 64]. No image goes
    # in, so a [1, 16, 64] out is one vector per position, not a 16×64 grey picture.
    w = numpy_helper.from_array(np.ones((32, 64), np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["frames", "W"], ["encoded"])], "seq",
        [helper.make_tensor_value_info("frames", TensorProto.FLOAT, [1, 16, 32])],
        [helper.make_tensor_value_info("encoded", TensorProto.FLOAT, [1, 16, 64])], [w])
    model = save(make_model(graph, opset=18), tmp_path / "seq.onnx")
    (out,) = _run_json(model, capsys, "--random")["outputs"]
    assert out["kind"] == "hidden state" and "MatMul" in out["kind_reason"]
