"""The on-disk layout cache: a second open of the same file gives the same drawing without
laying out, and nothing else (an edit, another state, other code, a damaged entry) is
ever served from it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import onnx
import pytest

from onnxstudio.layout import cache
from onnxstudio.layout.build import build_layout
from onnxstudio.layout.state import ExpandState, default_state
from onnxstudio.layout.types import Layout
from onnxstudio.model.graph import Model
from onnxstudio.model.open import load_model, model_from_proto, open_model
from onnxstudio.model.source import read_from
from tests.builders import save, tiny_mlp
from tests.conftest import ladder_model


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every layout the cache had to build (by graph name), each one stored."""
    calls: list[str] = []

    def counting(graph: Any, *args: Any, **kwargs: Any) -> Layout:
        calls.append(graph.name)
        return build_layout(graph, *args, **kwargs)

    monkeypatch.setattr(cache, "build_layout", counting)
    monkeypatch.setattr(cache, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(cache, "HASH_SHARE", 1e6)  # small files, quick layouts: hash them
    return calls


def opened(path: Path) -> Model:
    model, shapes = open_model(path)
    shapes.cancel()
    return model


def fresh(model: Model, state: ExpandState, direction: Any = "TB") -> Layout:
    return build_layout(model.graph, state, direction,
                        functions={f.key: f.body for f in model.functions})


def entries() -> list[Path]:
    return sorted(cache.cache_dir().glob("*.layout"))


def test_second_open_of_a_real_model_is_served_and_equal(builds: list[str]) -> None:
    path = ladder_model("bert12.onnx")
    first = opened(path)
    state = default_state(first.graph)
    assert cache.layout_model(first, state) == fresh(first, state)
    assert len(builds) == 1 and len(entries()) == 1
    second = opened(path)
    served = cache.layout_model(second, default_state(second.graph))
    assert len(builds) == 1  # not laid out again
    expected = fresh(second, state)
    assert served.boxes == expected.boxes and served.boxes
    assert served.edges == expected.edges and served.edges
    assert served.groups == expected.groups and served.groups
    assert (served.width, served.height, served.direction) == (
        expected.width, expected.height, "TB")


def test_another_state_direction_or_shapes_misses(builds: list[str], tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    model = opened(path)
    state = default_state(model.graph)
    cache.layout_model(model, state)
    cache.layout_model(model, ExpandState())  # collapsed
    lr = cache.layout_model(model, state, "LR")
    cache.layout_model(load_model(path), state)  # inferred shapes: other edge labels
    assert len(builds) == 4 and len(entries()) == 4
    assert lr.direction == "LR" and lr == fresh(model, state, "LR")
    for again in (state, ExpandState()):
        cache.layout_model(opened(path), again)
    assert len(builds) == 4


def test_changed_code_or_file_misses(builds: list[str], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    state = default_state(opened(path).graph)
    cache.layout_model(opened(path), state)
    monkeypatch.setattr(cache, "code_fingerprint", lambda: "another version of the layout")
    cache.layout_model(opened(path), state)
    assert len(builds) == 2
    proto = tiny_mlp()
    proto.graph.node[4].attribute[0].i = 1  # Softmax axis: another detail line
    save(proto, path)
    changed = opened(path)
    assert cache.layout_model(changed, state) == fresh(changed, state)
    assert len(builds) == 3


def test_an_edited_model_is_laid_out_not_served(builds: list[str], tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    model = opened(path)
    state = default_state(model.graph)
    original = cache.layout_model(model, state)
    proto = onnx.load(str(path))
    proto.graph.node[2].op_type = "Sigmoid"  # what the edit mode's rebuild does
    edited = model_from_proto(proto, path)  # same path, new content
    assert read_from(edited) is None
    drawn = cache.layout_model(edited, state)
    assert len(builds) == 2 and len(entries()) == 1
    assert "Sigmoid" in {b.title for b in drawn.boxes} - {b.title for b in original.boxes}


def test_inferred_shapes_arriving_unmark_the_model(tmp_path: Path) -> None:
    proto = tiny_mlp()
    del proto.graph.output[0].type.tensor_type.shape.dim[:]  # left for inference
    model, shapes = open_model(save(proto, tmp_path / "mlp.onnx"))
    assert read_from(model) is not None and read_from(model).shapes == "declared"
    assert shapes.apply(model) > 0
    assert read_from(model) is None  # its types are no longer the file's alone


@pytest.mark.parametrize("damage", ["garbage", "flipped", "truncated", "empty"])
def test_damaged_entry_falls_back_to_laying_out(builds: list[str], tmp_path: Path,
                                                damage: str) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    state = default_state(opened(path).graph)
    expected = cache.layout_model(opened(path), state)
    (entry,) = entries()
    data = bytearray(entry.read_bytes())
    if damage == "garbage":
        data = bytearray(b"\x80\x05not a layout at all" * 10)
    elif damage == "flipped":
        data[-20] ^= 0xFF
    elif damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data = bytearray()
    entry.write_bytes(bytes(data))
    assert cache.layout_model(opened(path), state) == expected
    assert len(builds) == 2
    cache.layout_model(opened(path), state)  # the rebuilt layout was stored again
    assert len(builds) == 2


def test_unusable_cache_dir_or_switched_off_still_lays_out(
        builds: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    state = default_state(opened(path).graph)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert cache.layout_model(opened(path), state) == fresh(opened(path), state)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(cache.ENV_OFF, "1")
    cache.layout_model(opened(path), state)
    cache.layout_model(opened(path), state)
    assert len(builds) == 3 and not (tmp_path / "cache").exists()


def test_quick_layouts_are_not_kept(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    cache.layout_model(opened(path), ExpandState())  # well under MIN_SECONDS
    assert entries() == []


def test_prune_drops_least_recently_used_first(tmp_path: Path) -> None:
    folder = cache.cache_dir()
    folder.mkdir(parents=True)
    for age, name in enumerate(["new", "middle", "old"]):
        entry = folder / f"{name}.layout"
        entry.write_bytes(b"x" * 1000)
        os.utime(entry, (1e9 - age * 100, 1e9 - age * 100))
    cache.prune(max_bytes=2000)
    assert sorted(p.stem for p in entries()) == ["middle", "new"]
    cache.prune(max_bytes=10_000, max_files=1)
    assert [p.stem for p in entries()] == ["new"]


def test_window_second_open_shows_the_same_boxes(qtbot, builds: list[str]) -> None:
    from onnxstudio.ui.canvas.model_tab import ModelTab

    path = ladder_model("resnet50.onnx")
    shown, laid_out = [], []
    for _ in range(2):
        tab = ModelTab(path)
        qtbot.addWidget(tab)
        tab.resize(900, 700)
        tab.show()
        before = len(builds)
        with qtbot.waitSignal(tab.loaded, timeout=120000):
            tab.start()
        laid_out.append(len(builds) - before)
        painter = tab.view.painter()
        assert painter is not None and painter.layout is tab.layout_data
        shown.append([(b.id, b.title, b.x, b.y, b.width, b.height)
                      for b in painter.layout.boxes])
        qtbot.waitUntil(lambda tab=tab: not tab.busy, timeout=120000)
        tab.shutdown()
    assert laid_out == [1, 0]  # the second open was served from the cache
    assert shown[0] == shown[1] and len(shown[0]) > 100


def test_file_too_big_to_hash_for_its_layout_is_not_kept(
        builds: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    monkeypatch.setattr(cache, "HASH_RATE", 1e-12)  # hashing would outlast any layout
    cache.layout_model(opened(path), ExpandState())
    assert entries() == [] and list(cache.cache_dir().glob("*.digest")) == []


def test_file_rewritten_after_reading_is_neither_served_nor_kept(
        builds: list[str], tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    cache.layout_model(opened(path), ExpandState())
    stale = opened(path)
    proto = tiny_mlp()
    proto.graph.node[2].op_type = "Sigmoid"
    save(proto, path)  # the model in memory no longer is this file's content
    os.utime(path, ns=(0, read_from(stale).stamp[1]))  # even with the old mtime
    cache.layout_model(stale, ExpandState())
    assert len(builds) == 2 and len(entries()) == 1


def _tree_shape(tree: Any) -> tuple[Any, ...]:
    groups = [tree.root, *tree.root.groups()]
    return (
        [(g.id, g.label, g.kind, g.node_count, g.parent.id if g.parent else None,
          [c if isinstance(c, str) else c.id for c in g.children]) for g in groups],
        {k: g.id for k, g in tree.group_of.items()},
        {k: g.id for k, g in tree.by_id.items()},
    )


def test_scope_tree_read_back_serves_the_default_state(
        builds: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxstudio.layout.scopes import graph_scope_tree

    path = ladder_model("bert12.onnx")
    first = opened(path)
    built = cache.scope_tree(first)
    assert len(list(cache.cache_dir().glob("*.tree"))) == 1
    monkeypatch.setattr(cache, "graph_scope_tree", lambda graph: pytest.fail("built again"))
    second = opened(path)
    served = cache.scope_tree(second)
    assert graph_scope_tree(second.graph) is served  # what the state and layout will use
    assert cache.scope_tree(second) is served
    assert _tree_shape(served) == _tree_shape(built) and len(served.group_of) > 500
    assert default_state(second.graph) == default_state(first.graph)


def test_cli_export_twice_writes_the_same_file_laid_out_once(
        builds: list[str], tmp_path: Path) -> None:
    from onnxstudio.cli import main

    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    outputs = [tmp_path / "first.svg", tmp_path / "second.svg"]
    for out in outputs:
        assert main(["export", str(path), str(out)]) == 0
    assert len(builds) == 1
    assert outputs[0].read_bytes() == outputs[1].read_bytes()
    assert b"Softmax" in outputs[0].read_bytes()


def test_stores_later_queues_what_is_kept_until_the_caller_writes_it(
        builds: list[str], tmp_path: Path) -> None:
    """The CLI export writes the cache after its file: within ``stores_later``
    nothing is written, and the queued writes leave what a direct store leaves."""
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    model = opened(path)
    with cache.stores_later() as stores:
        layout = cache.layout_model(model, default_state(model.graph))
    assert len(stores) == 1 and entries() == []
    for keep in stores:
        keep()
    assert len(entries()) == 1
    again = opened(path)
    assert cache.layout_model(again, default_state(again.graph)) == layout
    assert len(builds) == 1
