"""The group walk's boxes: plain operators share their type's look, the rest keep one of
their own, and every box made by setting slots is the one the dataclass makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.layout import ExpandState, build_layout, labels, sizing
from onnxstudio.layout.box_looks import BOX_SLOTS
from onnxstudio.layout.types import Box
from onnxstudio.model import Model, load_model
from tests.builders import make_model, save
from tests.conftest import ladder_model


def _mixed(tmp_path: Path) -> Model:
    """Six plain Relu/Sigmoid, a Transpose with an attribute, an Add reading a weight and
    an operator of another domain, in two groups."""
    names = ["/a/Relu_0", "/a/Sigmoid_1", "/a/Relu_2", "/b/Relu_3", "/b/Sigmoid_4",
             "/b/Relu_5"]
    nodes = [helper.make_node(n.split("/")[-1].split("_")[0], [f"t{i}"], [f"t{i + 1}"], name=n)
             for i, n in enumerate(names)]
    nodes += [
        helper.make_node("Transpose", ["t6"], ["t7"], name="/b/Transpose", perm=[1, 0]),
        helper.make_node("Add", ["t7", "bias"], ["t8"], name="/b/Add"),
        helper.make_node("Scale", ["t8"], ["y"], name="/b/Scale", domain="com.example"),
    ]
    bias = numpy_helper.from_array(np.zeros((4, 4), np.float32), "bias")
    graph = helper.make_graph(
        nodes, "mixed", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])], [bias])
    model = make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid("com.example", 1)])
    return load_model(save(model, tmp_path / "mixed.onnx"))


def test_plain_operators_take_their_types_look_without_reading_attributes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _mixed(tmp_path)
    asked: list[str] = []
    real = labels.attribute_lines

    def counted(node: Any) -> list[str]:
        asked.append(node.name)
        return real(node)

    monkeypatch.setattr(labels, "attribute_lines", counted)
    state = ExpandState()
    state.expand_all(model.graph)
    layout = build_layout(model, state)
    # only the boxes whose look is their own read their attributes and weights
    assert sorted(asked) == ["/b/Add", "/b/Scale", "/b/Transpose"]
    by_name = {b.subtitle: b for b in layout.boxes if b.kind == "node"}
    relus = [b for b in by_name.values() if b.title == "Relu"]
    assert len(relus) == 4 and len({id(b.details) for b in relus}) == 1
    assert all((b.width, b.height) == sizing.box_size("Relu") for b in relus)
    assert {b.category for b in relus} == {"activation"}
    assert by_name["/b/Transpose"].details == ("perm 1,0",)
    assert by_name["/b/Add"].details == ("B ⟨4×4⟩",)
    assert by_name["/b/Scale"].category == "custom"  # another domain: not the type's look
    # kept for a re-layout: nothing is read again
    asked.clear()
    state.toggle("/a")
    build_layout(model, state)
    assert asked == []


def test_every_walked_box_is_the_dataclasss() -> None:
    """The walk sets a new Box's slots: each is set, to what the constructor gives, and
    left to right (sized across, then turned) gives every box its top-down size."""
    model = load_model(ladder_model("bert12.onnx"))
    state = ExpandState()
    state.expand_all(model.graph)
    sizes = {}
    for direction in ("TB", "LR"):
        layout = build_layout(model, state, direction)  # type: ignore[arg-type]
        boxes = [b for b in layout.boxes if b.kind == "node"]
        assert len(boxes) > 500
        for box in boxes:
            assert Box(*(getattr(box, name) for name in BOX_SLOTS)) == box
        sizes[direction] = {b.id: (b.width, b.height) for b in boxes}
    assert sizes["TB"] == sizes["LR"]


def test_kept_looks_let_their_graph_go(tmp_path: Path) -> None:
    """The looks are kept while their graph lives, not longer: a laid-out graph dropped
    goes by reference counting (a strong reference from the kept looks held every
    closed model in the window)."""
    import weakref

    model = _mixed(tmp_path)
    state = ExpandState()
    state.expand_all(model.graph)
    build_layout(model, state)
    graph = weakref.ref(model.graph)
    del model
    assert graph() is None
