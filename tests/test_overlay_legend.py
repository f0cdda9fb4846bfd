"""The canvas' overlay key: a longer key replacing a shorter one is never cut off."""

from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtWidgets import QWidget

from onnxstudio.ui.canvas.overlay_legend import OverlayLegend


def _overlay(title: str, captions: list[str]) -> SimpleNamespace:
    colours = ["#ffffcc", "#fd8d3c", "#e31a1c", "#800026"]
    return SimpleNamespace(data=SimpleNamespace(title=title),
                           legend=list(zip(colours, captions, strict=False)))


def test_a_longer_key_after_a_short_one_is_shown_whole(qtbot) -> None:
    canvas = QWidget()
    qtbot.addWidget(canvas)
    canvas.resize(900, 600)
    canvas.show()
    legend = OverlayLegend(canvas)
    legend.show_overlay(_overlay("Time per node", ["0", "0.44 ms", "4.4 ms"]))
    qtbot.wait(20)
    legend.show_overlay(_overlay("ort:cpu:all vs ort:cpu:disable",
                                 ["≤ 1e-3", "1e-3 … 1e-2", "= tolerance", "≥ 10× tolerance"]))
    qtbot.wait(20)
    assert legend.isVisible()
    assert legend.width() >= legend.sizeHint().width()
    assert legend.title.width() >= legend.title.sizeHint().width()
    assert legend.geometry().bottom() < canvas.height()


def test_no_overlay_hides_the_key(qtbot) -> None:
    canvas = QWidget()
    qtbot.addWidget(canvas)
    canvas.show()
    legend = OverlayLegend(canvas)
    legend.show_overlay(_overlay("Time per node", ["0", "4.4 ms"]))
    legend.show_overlay(None)
    assert not legend.isVisible()
