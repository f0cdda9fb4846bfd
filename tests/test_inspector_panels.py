"""Model, opset, weights and search panels driven as a user would, on real models."""

from __future__ import annotations

import hashlib

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from PySide6.QtCore import Qt

from onnxstudio.model import load_model
from onnxstudio.ui.inspector.model_panel import ModelPanel
from onnxstudio.ui.inspector.opset_panel import OpsetPanel
from onnxstudio.ui.inspector.search_panel import SearchPanel
from onnxstudio.ui.inspector.weights_panel import WeightsPanel
from tests.builders import save, tiny_mlp
from tests.conftest import ladder_model, shared_model
from tests.test_inspector_core import bf16_model

TESTDATA = "ortdata/onnxruntime/test/testdata/"


def row_value(tree, section: str, name: str) -> str:
    item = tree.find_row(name, section)
    assert item is not None, f"no row {name!r} in {section!r}"
    return item.text(1)


# --- model panel ----------------------------------------------------------------------

def test_model_panel_shows_metadata_and_header_fields(qtbot):
    path = shared_model(TESTDATA + "model_with_metadata.onnx")
    proto = onnx.load(str(path))
    panel = ModelPanel()
    qtbot.addWidget(panel)
    assert panel.stack.currentWidget() is panel.placeholder
    panel.set_model(load_model(path))
    tree = panel.tree
    assert row_value(tree, "Model", "IR version") == str(proto.ir_version)
    assert row_value(tree, "Model", "Producer") == proto.producer_name
    assert row_value(tree, "Model", "Domain") == proto.domain
    assert row_value(tree, "Model", "Model version") == str(proto.model_version)
    assert row_value(tree, "Model", "Description") == proto.doc_string
    for prop in proto.metadata_props:
        assert row_value(tree, "Metadata", prop.key or "(empty key)") == (prop.value or "(empty)")
    assert row_value(tree, "Opset imports", "ai.onnx") == str(proto.opset_import[0].version)
    assert row_value(tree, "Operators", "Sigmoid") == "1"
    with qtbot.waitSignal(panel.jumpToNode) as blocker:
        tree.itemClicked.emit(tree.find_row("X", "Inputs"), 1)
    assert blocker.args == ["in:X"]


def test_model_panel_counts_and_warnings(qtbot):
    path = shared_model(TESTDATA + "custom_op_string_lower.onnx")
    model = load_model(path)
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_model(model)
    warnings = [v for n, v, _ in panel.tree.row_texts() if n == "⚠"]
    assert warnings == model.warnings and warnings


# --- opset panel ----------------------------------------------------------------------

def test_opset_table_and_conversion_to_new_file(qtbot, tmp_path):
    source = shared_model(TESTDATA + "conv_qdq_s8s8_perchannel.onnx")
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    model = load_model(source)
    panel = OpsetPanel()
    qtbot.addWidget(panel)
    panel.set_model(model)
    rows = {r[0]: r for r in panel.table_rows()}
    for op in ("Conv", "QuantizeLinear", "DequantizeLinear"):
        assert rows[op][3] == str(onnx.defs.get_schema(op, max_inclusive_version=13)
                                  .since_version)
        assert rows[op][4] == str(onnx.defs.get_schema(op).since_version)
    assert rows["DequantizeLinear"][2] == "4"
    target = tmp_path / "qdq21.onnx"
    with qtbot.waitSignal(panel.converted, timeout=60000) as blocker:
        panel.start_conversion(21, target)
    assert blocker.args == [str(target)]
    onnx.checker.check_model(str(target))
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before
    with qtbot.waitSignal(panel.openConverted) as blocker:
        panel.status.linkActivated.emit("open")
    assert blocker.args == [str(target)]


def test_opset_conversion_failure_is_reported(qtbot, tmp_path):
    model = load_model(shared_model(TESTDATA + "if_mul.onnx"))
    panel = OpsetPanel()
    qtbot.addWidget(panel)
    panel.set_model(model)
    with qtbot.waitSignal(panel.conversionFailed, timeout=60000) as blocker:
        panel.start_conversion(5, tmp_path / "old.onnx")
    assert "cannot convert if_mul.onnx" in blocker.args[0]
    assert "cannot convert" in panel.status.text()
    assert panel.convert_button.isEnabled()
    assert not (tmp_path / "old.onnx").exists()


# --- weights panel ----------------------------------------------------------------------

def load_weight(qtbot, panel: WeightsPanel, model, name: str) -> None:
    with qtbot.waitSignal(panel.loaded, timeout=30000):
        panel.show_initializer(model, name)


def test_weights_stats_equal_numpy_on_real_initializer(qtbot):
    path = ladder_model("hf_bert12_dynamo.onnx")
    model = load_model(path)
    name = "embeddings.position_embeddings.weight"
    proto = onnx.load(str(path), load_external_data=False)
    expected = numpy_helper.to_array(
        next(t for t in proto.graph.initializer if t.name == name), base_dir=str(path.parent))
    panel = WeightsPanel()
    qtbot.addWidget(panel)
    assert panel.stack.currentWidget() is panel.placeholder
    load_weight(qtbot, panel, model, name)
    labels = {k: v.text() for k, v in panel.stat_labels.items()}
    wide = expected.astype(np.float64)
    assert labels["dtype"] == "float32" and labels["shape"] == "[512, 64]"
    assert float(labels["min"]) == pytest.approx(float(expected.min()), rel=1e-5)
    assert float(labels["max"]) == pytest.approx(float(expected.max()), rel=1e-5)
    assert float(labels["mean"]) == pytest.approx(wide.mean(), rel=1e-5)
    assert float(labels["std"]) == pytest.approx(wide.std(), rel=1e-5)
    model_ = panel.table_model
    assert (model_.rowCount(), model_.columnCount()) == expected.shape
    cell = model_.data(model_.index(7, 5))
    assert float(cell) == pytest.approx(float(expected[7, 5]), rel=1e-4)
    assert model_.headerData(7, Qt.Orientation.Vertical) == "[7, :]"


def test_bfloat16_weight_displayed_as_its_float_values(qtbot, tmp_path):
    path, expected = bf16_model(tmp_path)
    model = load_model(path)
    panel = WeightsPanel()
    qtbot.addWidget(panel)
    load_weight(qtbot, panel, model, "w_bf16")
    assert panel.stat_labels["dtype"].text() == "bfloat16 (shown as float32)"
    assert panel.stat_labels["min"].text() == "-2"
    assert panel.stat_labels["max"].text() == "65280"
    table = panel.table_model
    shown = [float(table.data(table.index(r, c))) for r in range(2) for c in range(3)]
    np.testing.assert_allclose(shown, expected, rtol=1e-4)
    out = panel.save_to(tmp_path / "w.npy")
    assert out is not None
    np.testing.assert_array_equal(np.load(out).ravel(), expected)


def test_weights_int8_quantized_initializer(qtbot):
    path = shared_model(TESTDATA + "conv_qdq_s8s8_perchannel.onnx")
    model = load_model(path)
    proto = onnx.load(str(path))
    tensor = next(t for t in proto.graph.initializer if t.data_type == onnx.TensorProto.INT8
                  and len(t.dims) == 4)
    expected = numpy_helper.to_array(tensor)
    panel = WeightsPanel()
    qtbot.addWidget(panel)
    load_weight(qtbot, panel, model, tensor.name)
    assert panel.stat_labels["dtype"].text() == "int8"
    assert panel.stat_labels["min"].text() == str(int(expected.min()))
    assert panel.stat_labels["max"].text() == str(int(expected.max()))
    zeros = (expected == 0).mean()
    assert panel.stat_labels["zeros"].text().startswith(f"{zeros:.2%}")


# --- search panel --------------------------------------------------------------------

def test_search_panel_types_cycles_and_activates(qtbot, tmp_path):
    model = load_model(save(tiny_mlp(), tmp_path / "m.onnx"))
    panel = SearchPanel()
    qtbot.addWidget(panel)
    panel.set_model(model)
    panel.show()
    with qtbot.waitSignal(panel.matchesChanged, timeout=3000) as blocker:
        qtbot.keyClicks(panel.edit, "matmul")
    matmuls = {n.id for n in model.graph.nodes if n.op_type == "MatMul"}
    assert blocker.args[0] == matmuls
    assert [h.kind for h in panel.hits] == ["node", "node"]
    activated = []
    panel.resultActivated.connect(activated.append)
    qtbot.keyClick(panel.edit, Qt.Key.Key_Return)
    qtbot.keyClick(panel.edit, Qt.Key.Key_F3)
    qtbot.keyClick(panel.edit, Qt.Key.Key_F3)
    qtbot.keyClick(panel.edit, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    first, second = sorted(matmuls, key=lambda i: int(i[1:]))
    assert activated == [first, second, first, second]
    panel.set_query(r"^/head/", regex=True)
    assert {h.target for h in panel.hits} == {
        n.id for n in model.graph.nodes if n.name.startswith("/head/")}
    panel.set_query("(", regex=True)
    assert "invalid regular expression" in panel.count.text()
    panel.set_query("Softmax", case_sensitive=True)
    assert len(panel.hits) == 1
    panel.set_query("softmax", case_sensitive=True)
    assert panel.hits == [] and panel.count.text() == "No matches"


def test_search_panel_finds_node_inside_if_body(qtbot):
    model = load_model(shared_model(TESTDATA + "if_mul.onnx"))
    panel = SearchPanel()
    qtbot.addWidget(panel)
    panel.set_model(model)
    panel.set_query("mul_1")
    with qtbot.waitSignal(panel.resultActivated) as blocker:
        panel.next_result()
    assert blocker.args == ["n0/else_branch/n0"]


def test_weights_table_copies_selected_values(qtbot, tmp_path):
    model = load_model(save(tiny_mlp(), tmp_path / "m.onnx"))
    panel = WeightsPanel()
    qtbot.addWidget(panel)
    load_weight(qtbot, panel, model, "W2")
    table = panel.table
    table.selectionModel().select(
        table.model().index(1, 0),
        table.selectionModel().SelectionFlag.Select)
    table.selectionModel().select(
        table.model().index(1, 2),
        table.selectionModel().SelectionFlag.Select)
    w2 = next(numpy_helper.to_array(t) for t in tiny_mlp().graph.initializer if t.name == "W2")
    assert [float(x) for x in panel.selection_text().split("\t")] == pytest.approx(
        [w2[1, 0], w2[1, 2]], rel=1e-4)


def test_int4_weights_show_dequantised(qtbot, tmp_path):
    from onnxstudio.model.quantized import dequantize_nbits
    from onnxstudio.model.weights import WeightStore
    from tests.llm_builders import HIDDEN, save_tiny_llm

    path = save_tiny_llm(tmp_path / "tiny", layers=1)
    model = load_model(path)
    name = "model.layers.0.attn.q_proj.weight_Q4"
    panel = WeightsPanel()
    qtbot.addWidget(panel)
    load_weight(qtbot, panel, model, name)
    labels = {k: v.text() for k, v in panel.stat_labels.items()}
    assert labels["dtype"] == "uint8 (shown as float32)"
    assert labels["shape"].endswith(f"blocks of a {HIDDEN}×{HIDDEN} weight, shown dequantised")
    table = panel.table_model
    assert (table.rowCount(), table.columnCount()) == (HIDDEN, HIDDEN)
    want = dequantize_nbits(model.graph, name, WeightStore(path).read)
    assert float(table.data(table.index(3, 5))) == pytest.approx(float(want[3, 5]), rel=1e-4)
