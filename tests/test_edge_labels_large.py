"""Edge labels of a huge expanded layout: every label checked against the others and the
boxes (above 20,000 edges they used to go unchecked: 1,649 pairs of expanded dag30k's
labels touched or overlapped), and placed the same whether a screen places the tiles it
shows one view at a time or an export places them all at once."""

from __future__ import annotations

import numpy as np
import pytest

from onnxstudio.layout.cache import layout_model
from onnxstudio.layout.state import ExpandState
from onnxstudio.layout.types import Layout
from onnxstudio.model.open import load_model
from onnxstudio.render.edge_labels import LABEL_GAP
from onnxstudio.render.rect_join import covering
from onnxstudio.render.scene_painter import GraphPainter
from onnxstudio.render.theme import LIGHT
from tests.builders import save
from tests.conftest import LADDER
from tests.render_support import edge_labels_drawn

VIEW = (1920.0, 1080.0)


@pytest.fixture(scope="module")
def expanded(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    """dag30k from ../shared/ladder fully expanded, else a generated DAG whose expanded
    layout has more than 20,000 edges."""
    shared = LADDER / "dag30k.onnx"
    if shared.exists():
        path = shared
    else:
        from tests.benchmarks.ladder import dag

        path = save(dag(15_000), tmp_path_factory.mktemp("dag") / "dag15k.onnx")
    model = load_model(path)
    state = ExpandState()
    state.expand_all(model.graph, bodies=True)
    layout = layout_model(model, state)
    assert len(layout.edges) > 20_000
    return layout


@pytest.mark.slow
def test_no_two_labels_overlap_and_none_covers_a_box(expanded: Layout) -> None:
    placed = GraphPainter(expanded, LIGHT).labels.placed()
    rects = np.stack((placed.x0, placed.y0, placed.x1 - placed.x0, placed.y1 - placed.y0),
                     axis=1)
    assert len(rects) > 0.6 * len({(e.source, e.value) for e in expanded.edges if e.label})
    boxes = np.array([(b.x, b.y, b.width, b.height) for b in expanded.boxes])
    assert not covering(rects, boxes).any()
    # side by side, labels keep LABEL_GAP apart: no rectangle grown by half of it at
    # each side overlaps another grown so; each pair is asked in the grid cells it shares
    grown = (rects + np.array([-LABEL_GAP / 2 + 0.01, 0.0, LABEL_GAP - 0.02, 0.0])).tolist()
    cells: dict[tuple[int, int], list[int]] = {}
    for k, (x, y, rw, rh) in enumerate(grown):
        for cx in range(int(x // 256), int((x + rw) // 256) + 1):
            for cy in range(int(y // 256), int((y + rh) // 256) + 1):
                cells.setdefault((cx, cy), []).append(k)
    meeting = set()
    for members in cells.values():
        for i, a in enumerate(members):
            ax, ay, aw, ah = grown[a]
            for b in members[i + 1:]:
                bx, by, bw, bh = grown[b]
                if ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah:
                    meeting.add((a, b))
    assert not meeting


@pytest.mark.slow
def test_a_screen_and_an_export_place_the_same_labels(expanded: Layout) -> None:
    """The screen: a painter prepared for one view (the layout task), painting views
    scrolled over the drawing; the export: a fresh painter painting everything."""
    screen = GraphPainter(expanded, LIGHT)
    w, h = VIEW
    middle = (expanded.width / 2 - w / 2, expanded.height / 2 - h / 2, w, h)
    screen.prepare_first(middle)
    views = [middle] + [(x, y, w, h) for x in np.arange(-100.0, expanded.width, w * 0.7)
                        for y in np.linspace(0.0, expanded.height, 12)]
    seen: set[tuple[str, str, float, float]] = set()
    for view in views:
        seen |= edge_labels_drawn(screen, view)
    assert not screen.labels.placed_in(middle).complete and len(seen) > 100

    everything = edge_labels_drawn(GraphPainter(expanded, LIGHT), None)
    placed = screen.labels.placed()  # the screen's, finished
    shown = {f"label{i}" for i in placed.edge.tolist()}
    assert {item for item, *_ in everything} == shown
    assert seen <= everything
    assert edge_labels_drawn(screen, None) == everything
