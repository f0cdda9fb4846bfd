"""Scoped node names shortened by whole segments in a table or tree column, and operator
types cut at their end."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from onnxstudio.model.formatting import elide_path
from onnxstudio.ui.widgets.tables import delegate_text_padding


class PathDelegate(QStyledItemDelegate):
    """A scoped node name drops whole segments, keeping the layer's number and the last
    one ("…/layer.3/…/MatMul"); eliding characters left "…ion/self/MatMul" on every
    layer's row alike."""

    def initStyleOption(self, option: QStyleOptionViewItem,
                        index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        widget = option.widget
        padding = delegate_text_padding(widget) if widget is not None else 10
        metrics, room = option.fontMetrics, option.rect.width() - padding
        option.text = elide_path(option.text, lambda t: metrics.horizontalAdvance(t) <= room)


class RightElided(QStyledItemDelegate):
    """Cut at the right (an operator type's start names it), in a view eliding left."""

    def initStyleOption(self, option: QStyleOptionViewItem,
                        index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideRight
