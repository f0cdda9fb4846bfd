"""build_layout on real and generated models: geometry, hierarchy, determinism, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import onnx
import pytest

from onnxstudio.layout import ExpandState, build_layout, default_state, graph_scope_tree, labels
from onnxstudio.layout.metrics import center_crossings, route_crossings
from onnxstudio.layout.serialize import layout_from_dict, layout_to_dict
from onnxstudio.model import Model, load_model
from tests.benchmarks import ladder
from tests.builders import save, tiny_mlp
from tests.conftest import ladder_model, shared_model
from tests.layout_checks import check_layout


def _load(model: onnx.ModelProto, tmp_path: Path, name: str = "m.onnx") -> Model:
    return load_model(save(model, tmp_path / name))


def _full(model: Model) -> ExpandState:
    state = ExpandState()
    state.expand_all(model.graph)
    return state


@pytest.fixture(scope="module")
def bert12() -> Model:
    return load_model(ladder_model("bert12.onnx"))


def test_tiny_mlp_boxes_edges_and_folded_weights(tmp_path: Path) -> None:
    model = _load(tiny_mlp(), tmp_path)
    layout = build_layout(model, _full(model))
    check_layout(layout)
    kinds = sorted(b.kind for b in layout.boxes)
    assert kinds == ["input", "node", "node", "node", "node", "node", "output"]
    matmul = next(b for b in layout.boxes if b.subtitle == "/layer1/MatMul")
    assert matmul.details == ("B ⟨4×8⟩",)  # the weight is a line of its consumer, not a box
    assert {g.id for g in layout.groups} == {"/layer1", "/head"}
    pairs = {(e.source, e.target) for e in layout.edges}
    assert ("in:x", matmul.id) in pairs
    assert len(layout.edges) == 6


def test_collapse_and_expand_change_the_box_set(tmp_path: Path) -> None:
    model = _load(tiny_mlp(), tmp_path)
    collapsed = build_layout(model, ExpandState())
    ids = {b.id for b in collapsed.boxes}
    assert ids == {"in:x", "/layer1", "/head", "out:y"}
    group = collapsed.box("/layer1")
    assert group is not None and group.kind == "group" and group.expandable
    assert group.subtitle == "3 nodes"
    assert {(e.source, e.target) for e in collapsed.edges} == {
        ("in:x", "/layer1"), ("/layer1", "/head"), ("/head", "out:y")}
    check_layout(collapsed)
    state = ExpandState(groups={"/layer1"})
    half = build_layout(model, state)
    assert "/layer1" not in {b.id for b in half.boxes}
    assert "/head" in {b.id for b in half.boxes}
    assert [g.id for g in half.groups] == ["/layer1"]
    assert len(half.groups[0].members) == 3
    check_layout(half)


def test_reveal_expands_the_groups_holding_a_node(bert12: Model) -> None:
    tree = graph_scope_tree(bert12.graph)
    node = next(n for n in bert12.graph.nodes
                if n.name == "/encoder/layer.3/attention/self/Softmax")
    state = ExpandState()
    state.reveal(bert12.graph, node.id)
    assert {g.id for g in tree.ancestors(node.id)} <= state.groups
    layout = build_layout(bert12, state)
    assert layout.box(node.id) is not None
    assert layout.box("/encoder/layer.4") is not None  # its neighbours stay collapsed
    check_layout(layout)


def test_resnet_shared_relu_groups_do_not_make_cycles() -> None:
    model = load_model(ladder_model("resnet50.onnx"))
    layout = build_layout(model, _full(model))
    check_layout(layout)
    assert not any(e.back for e in layout.edges)
    assert len(layout.boxes) == 177  # 175 operators + input + output


def test_bert12_fully_expanded_beats_dagre(bert12: Model) -> None:
    layout = build_layout(bert12, _full(bert12))
    check_layout(layout)
    assert len(layout.boxes) > 700
    assert center_crossings(layout) < 226  # dagre: 226, Graphviz dot: 347
    assert route_crossings(layout) < 226


def test_generated_ladder_models(tmp_path: Path) -> None:
    """Without ../shared: the benchmark's own BERT and ResNet pass the same bar."""
    bert = _load(ladder.bert(12), tmp_path, "bert.onnx")
    layout = build_layout(bert, _full(bert))
    check_layout(layout)
    assert center_crossings(layout) < 226
    resnet = _load(ladder.resnet(), tmp_path, "resnet.onnx")
    layout = build_layout(resnet, _full(resnet))
    check_layout(layout)
    assert not any(e.back for e in layout.edges)  # the shared relu groups were untangled
    dag = _load(ladder.dag(3000), tmp_path, "dag.onnx")
    check_layout(build_layout(dag))


def test_default_state_expands_small_graphs_and_limits_big_ones(bert12: Model) -> None:
    tree = graph_scope_tree(bert12.graph)
    assert default_state(bert12.graph).groups == {g.id for g in tree.root.groups()}
    dag = load_model(ladder_model("dag30k.onnx"))
    layout = build_layout(dag)
    assert 100 < len(layout.boxes) <= 1500
    assert any(b.kind == "group" for b in layout.boxes)
    check_layout(layout)


def test_dynamo_metadata_scopes_give_groups() -> None:
    model = load_model(ladder_model("hf_bert12_dynamo.onnx"))
    tree = graph_scope_tree(model.graph)
    assert "/encoder/layer.3/attention" in tree.by_id
    layout = build_layout(model, _full(model))
    check_layout(layout)
    assert any(g.id == "/encoder/layer.3" for g in layout.groups)


def test_gpt2_dynamo_draws_without_made_up_frames() -> None:
    """Its root holds a few hundred items: drawn whole, no synthetic chunk frames."""
    model = load_model(ladder_model("hf_gpt2_12_dynamo.onnx"))
    layout = build_layout(model, _full(model))
    check_layout(layout)
    assert not any(g.kind == "chunk" for g in layout.groups)
    assert not any(e.back for e in layout.edges)


_DIGEST = """
import hashlib, json, sys
from onnxstudio.layout import ExpandState, build_layout
from onnxstudio.layout.serialize import layout_to_dict
from onnxstudio.model import load_model
m = load_model(sys.argv[1])
s = ExpandState()
s.expand_all(m.graph)
d = layout_to_dict(build_layout(m, s))
print(hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest())
"""


def test_deterministic_across_processes() -> None:
    """Same model, same picture: fresh processes with different hash seeds (set and dict
    order of strings) and no shared cache must produce identical layouts."""
    path = ladder_model("bert12.onnx")
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", _DIGEST, str(path)], env=env,
                             cwd=Path(__file__).parent.parent, capture_output=True,
                             text=True, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_memoised_and_fresh_layouts_agree(bert12: Model) -> None:
    from onnxstudio.layout import layered

    layered._CACHE.clear()
    fresh = layout_to_dict(build_layout(bert12, _full(bert12)))
    cached = layout_to_dict(build_layout(bert12, _full(bert12)))
    assert fresh == cached


def test_left_to_right(tmp_path: Path) -> None:
    model = _load(ladder.resnet((1, 1)), tmp_path)
    tb = build_layout(model, _full(model), "TB")
    lr = build_layout(model, _full(model), "LR")
    assert lr.direction == "LR"
    check_layout(lr)
    assert lr.width > lr.height and tb.height > tb.width
    tb_box = {b.id: b for b in tb.boxes}
    for b in lr.boxes:  # same boxes, same sizes
        assert (b.width, b.height) == (tb_box[b.id].width, tb_box[b.id].height)
    src = lr.box("in:input")
    assert src is not None and src.x == min(b.x for b in lr.boxes)


def test_json_round_trip(bert12: Model) -> None:
    layout = build_layout(bert12, default_state(bert12.graph))
    data = json.loads(json.dumps(layout_to_dict(layout)))
    node = next(n for n in data["nodes"] if n["kind"] == "node")
    assert set(node["box"]) == {"x", "y", "width", "height"}
    assert node["op_type"] and node["name"]
    assert data["groups"][0]["members"]
    again = layout_to_dict(layout_from_dict(data))
    assert again == data


def test_if_and_loop_bodies_expand_in_place() -> None:
    for path in ("node/node/test_if/model.onnx", "node/node/test_loop11/model.onnx"):
        model = load_model(shared_model(path))
        owner = next(n for n in model.graph.nodes if n.subgraphs)
        closed = build_layout(model, ExpandState())
        box = closed.box(owner.id)
        assert box is not None and box.expandable
        opened = build_layout(model, ExpandState(nodes={owner.id}))
        check_layout(opened)
        kinds = {g.kind for g in opened.groups}
        assert "subgraph" in kinds
        inner = {n.id for body in owner.subgraphs.values() for n in body.nodes}
        assert inner & {b.id for b in opened.boxes}
        assert not inner & {b.id for b in closed.boxes}
        frame = next(g for g in opened.groups if g.depth == 0)
        assert frame.id == f"{owner.id}/*" and owner.id in frame.members
        header = opened.box(owner.id)
        assert header is not None and not header.expandable  # open: no expand marker
        for body in (g for g in opened.groups if g.depth == 1):  # bodies below their node
            assert body.y >= header.y + header.height
        state = ExpandState(nodes={owner.id})
        state.toggle(frame.id)  # collapsing the frame folds the node back
        assert not state.nodes


def test_local_function_call_expands_in_place() -> None:
    model = load_model(shared_model(
        "ortdata/onnxruntime/test/testdata/transform/"
        "transform_nested_ifs_toplogical_sorted_nodes.onnx"))
    call = next(n for n in model.graph.nodes if n.function is not None)
    closed = build_layout(model, ExpandState())
    assert closed.box(call.id) is not None and closed.box(call.id).expandable  # type: ignore[union-attr]
    opened = build_layout(model, ExpandState(nodes={call.id}))
    check_layout(opened)
    frames = [g for g in opened.groups if g.kind == "function"]
    assert frames
    body = model.function(call.function)  # type: ignore[arg-type]
    assert body is not None
    inner = {f"{call.id}/{n.id}" for n in body.body.nodes}
    assert inner & {b.id for b in opened.boxes}
    functions = {f.key: f.body for f in model.functions}
    target = sorted(inner & {b.id for b in opened.boxes})[0]
    revealed = ExpandState()
    revealed.reveal(model.graph, target, functions)
    assert call.id in revealed.nodes
    assert build_layout(model, revealed).box(target) is not None
    everything = ExpandState()
    everything.expand_all(model.graph, bodies=True, functions=functions)
    full = build_layout(model, everything)
    check_layout(full)
    assert len(full.boxes) > len(opened.boxes)


def test_expand_all_names_every_group_body_and_call(bert12: Model) -> None:
    """Walked through the tree's split children and the nodes found in C: the same
    groups, bodies and calls as a walk over every child and node."""
    model = load_model(shared_model(
        "ortdata/onnxruntime/test/testdata/transform/"
        "transform_nested_ifs_toplogical_sorted_nodes.onnx"))
    functions = {f.key: f.body for f in model.functions}

    def reference(graph: Any, prefix: str = "") -> tuple[set[str], set[str]]:
        groups = {prefix + g.id for g in graph_scope_tree(graph).root.groups()}
        nodes: set[str] = set()
        for node in graph.nodes:
            bodies = list(node.subgraphs.values())
            if bodies:
                nodes.add(prefix + node.id)
            callee = functions.get(node.function) if node.function else None
            if callee is not None:
                nodes.add(prefix + node.id)
                bodies.append(callee)
            for body in bodies:
                inner = reference(body, prefix + node.id + "/" if body is callee else prefix)
                groups |= inner[0]
                nodes |= inner[1]
        return groups, nodes

    for m in (model, bert12):
        state = ExpandState()
        state.expand_all(m.graph, bodies=True, functions=functions)
        assert (state.groups, state.nodes) == reference(m.graph)
    assert state.groups and ExpandState(set(), set()) != state


def test_real_cnn_from_the_zoo() -> None:
    model = load_model(shared_model("zoo/onnx_light/light_resnet50.onnx"))
    layout = build_layout(model)
    check_layout(layout)
    folded = labels.folded_constants(model.graph)
    drawn = [n for n in model.graph.nodes if not labels.is_folded(n, folded)]
    assert len(layout.edges) >= len(drawn) - 5
    # onnx-caffe2 makes every weight with ConstantOfShape: they fold into their Conv as
    # detail lines instead of a row of hundreds of boxes.
    assert not any(b.title == "ConstantOfShape" for b in layout.boxes)
    assert any("⟨64×3×7×7⟩" in line for b in layout.boxes for line in b.details)
    assert layout.width < 2000


def test_cancel(bert12: Model) -> None:
    from onnxstudio.layout import LayoutCancelled

    with pytest.raises(LayoutCancelled):
        build_layout(bert12, _full(bert12), cancel=lambda: True)
    seen: list[float] = []
    build_layout(bert12, _full(bert12), progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen)


def test_dismantle_empties_the_build_but_not_what_the_layout_kept() -> None:
    """A finished build is freed piece by piece; the objects the layout holds survive."""
    from types import SimpleNamespace

    from onnxstudio.concurrency.gil_runs import dismantle

    kept = [1.0, 2.0]
    build = SimpleNamespace(boxes={f"n{i}": kept for i in range(1000)}, order=[kept] * 700,
                            name="build")
    pieces = [("a", "b", kept)] * 300
    dismantle(build, pieces)
    assert build.boxes == {} and build.order == [] and pieces == []
    assert build.name == "build" and kept == [1.0, 2.0]
