"""The CLI's export works on two cores (shapes inferred and half the SVG painted in a
fork) and writes exactly what one process writes."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from onnxstudio.concurrency.fork import Forked, ForkFailed
from onnxstudio.export.formats import export_layout
from onnxstudio.export.options import ExportOptions
from onnxstudio.model import load_model
from tests.builders import relu_chain, save, tiny_mlp
from tests.conftest import ladder_model
from tests.render_support import demo_layout


def test_forked_work_runs_in_another_process(forking: None) -> None:
    assert Forked(os.getpid).result() != os.getpid()


def test_forked_work_that_raises_has_no_result(forking: None) -> None:
    with pytest.raises(ForkFailed):
        Forked(lambda: 1 // 0).result()


def test_a_result_cut_short_is_no_result_and_delivered_forks_are_reaped(
        forking: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxstudio.concurrency import fork as forked

    done = Forked(lambda: "whole")
    assert done.result() == "whole"
    for _ in range(500):  # its exit, after the result, is reaped on a later call
        forked._reap()
        if not forked._EXITING:
            break
        time.sleep(0.01)
    assert not forked._EXITING

    def half(fd: int, data: bytes) -> None:  # the fork dies halfway through its result
        os.write(fd, data[:len(data) // 2])
        os._exit(0)

    monkeypatch.setattr(forked, "_write_all", half)
    with pytest.raises(ForkFailed):
        Forked(lambda: list(range(1000))).result()


def test_cancelled_forked_work_has_no_result() -> None:
    work = Forked(lambda: time.sleep(60))
    work.cancel()
    with pytest.raises(ForkFailed):
        work.result()


def _types(model) -> dict[str, object]:
    return {name: value.type for name, value in model.graph.values.items()}


@pytest.mark.parametrize("bad", [False, True])
def test_overlapped_load_is_the_same_model(tmp_path: Path, bad: bool) -> None:
    """Inferred in a fork: the same types, and the same warnings in the same order."""
    path = save(relu_chain(30, bad=bad), tmp_path / "chain.onnx")
    alone, overlapped = load_model(path), load_model(path, overlap=True)
    assert _types(overlapped) == _types(alone)
    assert overlapped.graph.values["v7"].type.describe() == "float32[2×8]"
    assert overlapped.warnings == alone.warnings
    assert any("shape inference failed" in w for w in overlapped.warnings) == bad


@pytest.mark.parametrize("bad", [False, True])
def test_load_with_inference_started_from_the_file_is_the_same_model(tmp_path: Path,
                                                                     bad: bool) -> None:
    """The CLI export starts the fork before it reads the model: the fork reads it."""
    from onnxstudio.model.infer_child import ForkedInference

    path = save(relu_chain(30, bad=bad), tmp_path / "chain.onnx")
    alone = load_model(path)
    early = load_model(path, inferring=ForkedInference(path))
    assert _types(early) == _types(alone) and early.warnings == alone.warnings
    assert early.graph.values["v7"].type.describe() == "float32[2×8]"


@pytest.mark.parametrize("early", [False, True])
def test_inference_that_crashes_its_fork_is_named_by_the_guard(forking: None, tmp_path: Path,
                                                               early: bool) -> None:
    """The fork infers unguarded: onnx's LabelEncoder inference segfaults on an input
    nothing defines, which ends the fork only; the model opens with the guard's reason."""
    from onnx import TensorProto, helper

    from onnxstudio.model.infer_child import ForkedInference
    from tests.builders import make_model

    node = helper.make_node("LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml",
                            keys_strings=["a"], values_int64s=[1], default_int64=0)
    graph = helper.make_graph([node], "dangling", [],
                              [helper.make_tensor_value_info("Y", TensorProto.INT64, [1])])
    path = save(make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                 helper.make_opsetid("ai.onnx.ml", 4)]),
                tmp_path / "m.onnx")
    model = load_model(path, inferring=ForkedInference(path)) if early else \
        load_model(path, overlap=True)
    assert any("input 'X' of node 'LabelEncoder' is produced by nothing" in w
               for w in model.warnings), model.warnings
    assert model.warnings == load_model(path).warnings


def test_overlapped_load_runs_untyped_work_while_shapes_are_inferred(tmp_path: Path) -> None:
    """``meanwhile`` gets the built model, marked as the file's (so the layout cache
    serves its scope tree), before the inferred types arrive."""
    from onnxstudio.model.source import read_from

    path = save(relu_chain(30), tmp_path / "chain.onnx")
    seen: list[tuple[str | None, str | None]] = []

    def meanwhile(model) -> None:
        source = read_from(model)
        seen.append((source and source.shapes, model.graph.values["v7"].type.shape))

    model = load_model(path, overlap=True, meanwhile=meanwhile)
    assert seen == [("inferred", None)]
    assert model.graph.values["v7"].type.describe() == "float32[2×8]"
    assert read_from(model) is not None and _types(model) == _types(load_model(path))
    with pytest.raises(ZeroDivisionError):
        load_model(path, overlap=True, meanwhile=lambda _model: 1 // 0)


def _svg_bytes(tmp_path: Path, layout, model, parallel: bool, name: str) -> bytes:
    dest = tmp_path / f"{name}-{parallel}.svg"
    export_layout(layout, model, dest, ExportOptions(title_block=True), parallel=parallel)
    return dest.read_bytes()


def test_parallel_svg_is_the_same_file(tmp_path: Path) -> None:
    from onnxstudio.export.build import layout_for_export

    model = load_model(save(tiny_mlp(), tmp_path / "m.onnx"))
    for name, layout, owner in (("demo", demo_layout(), None),
                                ("mlp", layout_for_export(model, ExportOptions()), model)):
        one = _svg_bytes(tmp_path, layout, owner, False, name)
        assert _svg_bytes(tmp_path, layout, owner, True, name) == one
        assert b'class="edge-label"' in one and b'class="node"' in one


def test_parallel_svg_of_a_real_model_is_the_same_file(tmp_path: Path) -> None:
    from onnxstudio.export.build import layout_for_export

    model = load_model(ladder_model("bert12.onnx"), overlap=True)
    layout = layout_for_export(model, ExportOptions())
    one = _svg_bytes(tmp_path, layout, model, False, "bert")
    assert _svg_bytes(tmp_path, layout, model, True, "bert") == one


@pytest.mark.parametrize("clash", [False, True])
def test_a_slow_fork_hands_its_last_boxes_to_the_parent(forking: None, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        clash: bool) -> None:
    """The parent, done with its half first, asks the fork to stop halfway through the
    boxes it has left and paints the rest: the same file as one paint. With a box id
    that meets an edge's (a suffix only the whole paint can tell), the fork's part and
    the parent's share are painted again by the parent."""
    from onnxstudio.render import scene_painter
    from tests.render_support import grid_layout

    layout = grid_layout(400)
    if clash:
        layout.boxes[0] = dataclasses.replace(layout.boxes[0], id="edge0")
    one = _svg_bytes(tmp_path, layout, None, False, "slow")
    parent = os.getpid()
    box = scene_painter.GraphPainter._box
    asked: list[int] = []

    def slow_in_the_fork(self, s, b, *args) -> None:
        if os.getpid() != parent:
            time.sleep(0.002)
        else:
            asked.append(1)
        box(self, s, b, *args)

    monkeypatch.setattr(scene_painter.GraphPainter, "_box", slow_in_the_fork)
    assert _svg_bytes(tmp_path, layout, None, True, "slow") == one
    assert len(asked) >= (500 if clash else 100)  # its share (and, on a clash, all again)


def test_a_fork_that_dies_mid_write_leaves_the_parent_to_paint_its_half(forking: None,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fork writes its part into the file itself; one that dies halfway through
    that write costs nothing but time: the parent paints its half over it."""
    from tests.render_support import grid_layout

    layout = grid_layout(300)
    one = _svg_bytes(tmp_path, layout, None, False, "dies")
    parent, pwrite = os.getpid(), os.pwrite

    def pwrite_then_die(fd: int, data, offset: int) -> int:
        if os.getpid() == parent:
            return pwrite(fd, data, offset)
        pwrite(fd, b"<garbage/>" * 100_000, offset)
        os._exit(3)

    monkeypatch.setattr(os, "pwrite", pwrite_then_die)
    assert _svg_bytes(tmp_path, layout, None, True, "dies") == one


def test_parallel_svg_keeps_item_ids_unique_across_the_halves(tmp_path: Path) -> None:
    """A box whose id is an edge's item id: painted after the edge, it takes a suffix,
    which only the whole paint can tell; the fork's half is painted again here."""
    layout = demo_layout()
    layout.boxes[1] = dataclasses.replace(layout.boxes[1], id="edge0")
    one = _svg_bytes(tmp_path, layout, None, False, "clash")
    assert b'id="i-edge0-2"' in one
    assert _svg_bytes(tmp_path, layout, None, True, "clash") == one


def test_without_fork_the_parallel_export_paints_in_one_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there is no fork (Windows), the same file, and the same loaded model."""
    layout = demo_layout()
    one = _svg_bytes(tmp_path, layout, None, False, "nofork")
    path = save(relu_chain(30, bad=True), tmp_path / "chain.onnx")
    alone = load_model(path)
    monkeypatch.delattr(os, "fork", raising=False)
    assert _svg_bytes(tmp_path, layout, None, True, "nofork") == one
    overlapped = load_model(path, overlap=True)
    assert _types(overlapped) == _types(alone) and overlapped.warnings == alone.warnings


def test_the_split_leaves_the_fork_room_to_write_its_part() -> None:
    from onnxstudio.export.svg import _share

    assert _share(1000, 0.0, 0.0) == 500  # its pace not known yet: half each
    assert _share(1000, 0.01, 1e-4) == 450  # 10 ms of writing left: 100 boxes' time
    assert _share(1000, 1.0, 1e-4) == 0  # the writing outlasts every box left
    assert _share(7, 0.0, 1e-4) == 3


def test_side_sources_decided_in_a_fork_give_the_same_layout(forking: None,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """build_layout(parallel=True) decides where the far-reaching side inputs go in a
    fork while it joins the edges (and runs ``meanwhile``): the same layout as one
    process makes, also when the fork fails."""
    from onnxstudio.layout import build, build_layout, default_state
    from onnxstudio.layout.serialize import layout_to_dict
    from tests.benchmarks import ladder

    model = load_model(save(ladder.bert(4), tmp_path / "bert4.onnx"))
    state = default_state(model.graph)
    one = layout_to_dict(build_layout(model, state))
    monkeypatch.setattr(build, "SIDE_SOURCES", False)
    assert layout_to_dict(build_layout(model, state)) != one  # the mask did move aside
    monkeypatch.setattr(build, "SIDE_SOURCES", True)
    forks: list[bool] = []

    class Counted(Forked):
        def __init__(self, work) -> None:
            super().__init__(work)
            forks.append(self.running)

    monkeypatch.setattr(build, "Forked", Counted)
    meanwhile: list[int] = []
    parallel = build_layout(model, state, parallel=True, meanwhile=lambda: meanwhile.append(1))
    assert layout_to_dict(parallel) == one and forks == [True] and meanwhile == [1]
    parent, moves = os.getpid(), build.side_moves

    def dies_in_the_fork(*args):
        if os.getpid() != parent:
            os._exit(3)
        return moves(*args)

    monkeypatch.setattr(build, "side_moves", dies_in_the_fork)
    assert layout_to_dict(build_layout(model, state, parallel=True)) == one


def test_the_forks_byte_checks_count_only_for_the_file_this_process_read(forking: None,
        tmp_path: Path) -> None:
    """The inference fork reads the file first and answers the loader's byte checks
    (is every name UTF-8?); a file replaced since is checked again here."""
    import select

    from onnxstudio.model.infer_child import ForkedInference

    path = tmp_path / "m.onnx"
    model = tiny_mlp()
    save(model, path)
    model.graph.node[0].name = "NODEXNAME"
    broken = model.SerializeToString().replace(b"NODEXNAME", b"NODE\xffNAME")
    for replaced in (False, True):
        if not replaced:
            path.write_bytes(broken)
        inferring = ForkedInference(path)
        assert select.select([inferring._said], [], [], 10)[0]  # the fork has spoken
        if replaced:
            path.write_bytes(broken)  # what the fork checked was the clean file
        loaded = load_model(path, inferring=inferring)
        assert "NODE\ufffdNAME" in [n.name for n in loaded.graph.nodes], replaced
        save(model, path)
