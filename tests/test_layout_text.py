"""Box text: sized with the painter's metrics, schema input names, abbreviated dims."""

from __future__ import annotations

from onnxstudio.layout import labels, sizing, viewport
from onnxstudio.layout.scopes import ScopeGroup, build_scope_tree
from onnxstudio.layout.types import Layout
from onnxstudio.model.graph import Graph, InitializerInfo, Node, TensorType, Value
from onnxstudio.render import boxes
from onnxstudio.render import text as tx


def _node(op: str, inputs: list[str], domain: str = "") -> Node:
    return Node(id="n0", index=0, name="c", op_type=op, domain=domain, inputs=inputs,
                outputs=["y"])


def test_box_width_comes_from_the_painters_metrics() -> None:
    """Whatever the layout reserves, the painter's elision leaves the text whole."""
    for title, details in [("BeamSearch", ["num_return_sequences ⟨scalar⟩"]),
                           ("SkipLayerNormalization", ["W ⟨64×3×3×3⟩"]),
                           ("Add", []), ("QLinearConv", ["x_zero_point = 0"])]:
        w, _ = sizing.box_size(title, details)
        assert tx.elide(title, tx.TITLE_FONT, w - 2 * boxes.TEXT_INSET) == title
        for d in details:
            assert tx.elide_end(d, tx.DETAIL_FONT, w - boxes.PAD_X - boxes.TEXT_INSET) == d
    assert sizing.box_size("Add")[0] == sizing.MIN_W
    # a group's title beside its marker and its count are whole too
    w, _ = sizing.group_box_size("embeddings/word_embeddings", "330 nodes")
    room = w - sizing.SHEET_OFFSET - 2 * boxes.PAD_X - sizing.MARKER_SIZE
    assert tx.elide("embeddings/word_embeddings", tx.TITLE_FONT, room) == \
        "embeddings/word_embeddings"


def test_only_labels_beyond_forty_characters_are_elided() -> None:
    fits, long = "x" * 40, "y" * 60
    w_fit = sizing.box_size(fits)[0]
    assert tx.elide(fits, tx.TITLE_FONT, w_fit - 2 * boxes.TEXT_INSET) == fits
    w_long = sizing.box_size(long)[0]
    assert w_long < sizing.box_size("y" * 45)[0] + 1  # capped at 40 characters' room
    assert "…" in tx.elide(long, tx.TITLE_FONT, w_long - 2 * boxes.TEXT_INSET)
    lines = sizing.fit_details(["x" * 500] + [f"l{i}" for i in range(20)])
    assert len(lines) == sizing.MAX_DETAILS and lines[0].endswith("…")
    assert len(lines[0]) <= sizing.MAX_LABEL_CHARS + 1


def test_a_long_shape_loses_whole_dimensions() -> None:
    line = "W ⟨" + "×".join(["1234567"] * 8) + "⟩"
    cut = sizing.fit_details([line])[0]
    assert cut.endswith("…⟩") and "×…" in cut
    # every number before the cut is whole
    assert all(part == "1234567" for part in cut[3:-2].split("×")[:-1])


def test_input_names_come_from_onnx_and_onnxruntime_schemas() -> None:
    graph = Graph(name="g", id_prefix="", initializers={
        n: InitializerInfo(n, "float32", (1,), 1, 4)
        for n in ("xs", "xz", "w", "ws", "wz", "ys", "yz", "gamma", "a", "b", "c")})
    qconv = _node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"])
    lines = labels.folded_input_lines(qconv, graph, {})
    assert [ln.split(" ")[0] for ln in lines] == [
        "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"]
    skip = _node("SkipLayerNormalization", ["x", "s", "gamma"], "com.microsoft")
    assert labels.folded_input_lines(skip, graph, {}) == ["gamma ⟨1⟩"]
    concat = _node("Concat", ["a", "b", "c"])
    assert labels.folded_input_lines(concat, graph, {})[0].startswith("inputs[0]")
    unknown = _node("Mystery", ["x", "a"], "com.acme")
    assert labels.folded_input_lines(unknown, graph, {}) == ["in1 ⟨1⟩"]


def test_long_symbolic_dims_are_abbreviated_the_same_way_everywhere() -> None:
    t = TensorType("float32", ("batch_size", "sequence_length", 768))
    assert labels.shape_text(t) == "batch_size×sl×768"
    assert labels.type_text(t) == "float32[batch_size×sl×768]"
    assert labels.dim_text("past_sequence_length + 1") == "psl + 1"
    graph = Graph(name="g", id_prefix="", values={"x": Value("x", t)})
    assert labels.dim_abbreviations(graph) == {"sl": "sequence_length"}


def test_chunks_only_for_scopes_too_large_to_draw() -> None:
    small = build_scope_tree([(f"n{i}", ()) for i in range(900)])
    assert not any(isinstance(c, ScopeGroup) for c in small.root.children)
    names = {f"n{i}": f"/blocks/Conv_{i}" for i in range(4000)}
    big = build_scope_tree([(f"n{i}", ()) for i in range(4000)], names=names)
    chunks = big.root.children
    assert 2 <= len(chunks) <= 4 and all(isinstance(c, ScopeGroup) for c in chunks)
    assert chunks[0].label == "Conv_0 … Conv_1333"  # type: ignore[union-attr]


def _column(n: int, inputs_x: float = 400.0) -> Layout:
    """A tall drawing: one input at the top, ``n`` boxes below it."""
    from onnxstudio.layout.types import Box

    boxes_ = [Box("in:x", "input", inputs_x, 0, 80, 30, "x")]
    boxes_ += [Box(f"n{i}", "node", 0, 60 + 60 * i, 900, 40, "Relu") for i in range(n)]
    return Layout("TB", 900, 60 + 60 * n, boxes_)


def test_first_view_is_readable_and_starts_at_the_inputs() -> None:
    small = _column(3)
    scale, centre = viewport.first_view(small, 1280, 800)
    assert scale * sizing.TITLE_FONT_PX >= viewport.READABLE_TITLE_PX
    assert centre == (small.width / 2, small.height / 2)  # fits legibly: whole
    big = _column(400)
    scale, (cx, cy) = viewport.first_view(big, 1280, 800)
    assert cx == big.width / 2  # narrower than the view: centred across
    assert scale * sizing.TITLE_FONT_PX >= viewport.READABLE_TITLE_PX - 1e-9
    top = cy - 800 / scale / 2
    assert top <= 0.0 and cy < big.height / 4  # the inputs are in view, at the top
    # Fit shows the whole drawing, though its titles are then too small to draw
    assert viewport.fit_scale(big, 1280, 800) == viewport.whole_scale(big, 1280, 800)
    assert viewport.fit_scale(big, 1280, 800) < viewport.FIT_MIN_SCALE


def test_a_collapsed_node_is_shown_as_its_outermost_closed_group() -> None:
    from onnxstudio.layout.state import ExpandState, shown_as
    from onnxstudio.model.graph import Graph, Node

    nodes = [Node(id=f"n{i}", index=i, name=f"/enc/layer.{i // 2}/Op{i}", op_type="Relu",
                  domain="", inputs=[], outputs=[]) for i in range(4)]
    graph = Graph(name="g", id_prefix="", nodes=nodes)
    assert shown_as(graph, ExpandState(), "n3") == "/enc"
    assert shown_as(graph, ExpandState({"/enc"}), "n3") == "/enc/layer.1"
    assert shown_as(graph, ExpandState({"/enc", "/enc/layer.1"}), "n3") == "n3"


def test_long_dim_expressions_keep_every_term() -> None:
    t = TensorType("float32", (2, "batch_size", 2, "past_seq_len+seq_len", 64))
    assert labels.type_text(t) == "float32[2×batch_size×2×psl+sl×64]"
    assert len(labels.type_text(t)) <= sizing.MAX_LABEL_CHARS  # drawn whole


def test_frames_are_as_wide_as_their_titles(tmp_path) -> None:
    from onnx import TensorProto, helper

    from onnxstudio.layout.build import build_layout
    from onnxstudio.layout.state import ExpandState
    from onnxstudio.model import load_model
    from tests.builders import make_model, save

    scope = "/ApplyActivationWithALongName_0"
    graph = helper.make_graph(
        [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"{scope}/Relu_{i}")
         for i in range(2)], "g",
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("v2", TensorProto.FLOAT, [1])])
    model = load_model(save(make_model(graph), tmp_path / "m.onnx"))
    for direction in ("TB", "LR"):
        layout = build_layout(model, ExpandState({scope}), direction=direction)
        frame = next(g for g in layout.groups if g.id == scope)
        assert frame.width >= sizing.frame_title_width(frame.label, frame.node_count) - 0.5
