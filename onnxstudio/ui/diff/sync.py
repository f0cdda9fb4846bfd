"""Keep two canvases of a diff on the same place: pan, zoom and selection follow.

Positions cannot be copied (the two layouts differ where the models do), so the follower
is anchored on a node: the box nearest the leader's centre that has a counterpart drawn
on the other side is put at the same place in the follower's viewport, at the same zoom.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QObject, QPointF

from onnxstudio.ui.canvas.graph_view import GraphView

Counterpart = Callable[[str], str | None]  # box id on one side -> on the other


class ViewSync(QObject):
    """Links views ``a`` and ``b``; ``to_b``/``to_a`` map box ids across."""

    def __init__(self, a: GraphView, b: GraphView, to_b: Counterpart, to_a: Counterpart,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.a, self.b = a, b
        self.maps = {id(a): (b, to_b), id(b): (a, to_a)}
        self.enabled = True
        # until both sides are drawn and fitted (``start``): each side's opening fit,
        # followed by the other, repainted both sides again and again as they landed
        self.waiting = True
        self._busy = False
        a.viewportChanged.connect(lambda: self.follow(a))
        b.viewportChanged.connect(lambda: self.follow(b))
        a.selectionChanged.connect(lambda ids: self.select(a, ids))
        b.selectionChanged.connect(lambda ids: self.select(b, ids))

    def follow(self, leader: GraphView) -> None:
        if not self.enabled or self._busy or self.waiting:
            return
        follower, across = self.maps[id(leader)]
        anchor = self._anchor(leader, follower, across)
        if anchor is None:
            return
        mine, theirs = anchor
        self._busy = True
        try:
            spot = leader.map_box_to_view(mine)
            follower.zoom_by(leader.current_scale() / max(follower.current_scale(), 1e-9))
            box = follower.index().box(theirs)  # type: ignore[union-attr]
            if spot is None or box is None:
                return
            # put the counterpart where the leader shows its node
            centre = leader.viewport().rect().center()
            scale = follower.current_scale()
            x, y = box.center
            dx, dy = (spot.x() - centre.x()) / scale, (spot.y() - centre.y()) / scale
            follower.centerOn(QPointF(x - dx, y - dy))
        finally:
            self._busy = False

    @staticmethod
    def _anchor(leader: GraphView, follower: GraphView, across: Counterpart
                ) -> tuple[str, str] | None:
        index, other = leader.index(), follower.index()
        if index is None or other is None:
            return None
        centre = leader.mapToScene(leader.viewport().rect().center())
        area = leader.visible_scene_rect()
        shown = index.box_indices_in((area.x(), area.y(), area.width(), area.height()))
        # Nearest first, by numpy; then only the few nearest are looked up. A loop over
        # every box drawn took 20-40 ms of BERT-96's diff for each resize and layout.
        rects = index.box_rects[shown]
        dx = rects[:, 0] + rects[:, 2] / 2 - centre.x()
        dy = rects[:, 1] + rects[:, 3] / 2 - centre.y()
        for i in shown[np.argsort(dx * dx + dy * dy, kind="stable")]:
            box_id = index.ids[i]
            if index.layout.boxes[i].kind == "group":
                continue
            theirs = across(box_id)
            if theirs is not None and other.box(theirs) is not None:
                return box_id, theirs
        return None

    def select(self, leader: GraphView, ids: list[str]) -> None:
        if not self.enabled or self._busy or self.waiting:
            return
        follower, across = self.maps[id(leader)]
        mapped = [m for m in (across(i) for i in ids) if m is not None]
        self._busy = True
        try:
            follower.set_selection(mapped, emit=False)
        finally:
            self._busy = False
