"""The tensor dock driven like a user would: what it shows must be the tensor's values."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QToolButton

from onnxstudio.model.formatting import human_bytes
from onnxstudio.runner.intermediates import capture
from onnxstudio.runner.pipeline import ImageSource, RunRequest
from onnxstudio.ui.insight.tensor_view import ALERT, EMPTY_TEXT, TensorView
from tests.conftest import shared_model

MNIST_VALUE = "ReLU32_Output_0"


@pytest.fixture(scope="module")
def mnist_activation() -> np.ndarray:
    model = shared_model("zoo/mnist/mnist.onnx")
    image = shared_model("images/digit_3.jpg")
    result = capture(RunRequest(model, images=[ImageSource(image.name, image)]), [MNIST_VALUE])
    return result.values[MNIST_VALUE]


@pytest.fixture
def view(qtbot) -> TensorView:
    widget = TensorView()
    qtbot.addWidget(widget)
    widget.resize(400, 900)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _stats(view: TensorView) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in view.stats_text().splitlines())


def _cell(view: TensorView, row: int, col: int) -> str:
    model = view.table_model()
    return model.data(model.index(row, col))


def _click_tile(qtbot, view: TensorView, channel: int, double: bool = False) -> None:
    grid = view.feature_grid()
    assert grid is not None
    t = grid.tiles[channel]
    centre = QPoint(t.x + t.w // 2, t.y + t.h // 2)
    if double:
        qtbot.mouseDClick(view.maps.grid_label, Qt.MouseButton.LeftButton, pos=centre)
    else:
        qtbot.mouseClick(view.maps.grid_label, Qt.MouseButton.LeftButton, pos=centre)


def test_real_activation_header_and_stats_equal_numpy(view, mnist_activation) -> None:
    a = mnist_activation
    view.show_tensor(MNIST_VALUE, a, "output 0 of Relu 'ReLU32' (n3)")
    assert view.current_name() == MNIST_VALUE and view.current_array() is a
    assert view.placeholder_text() is None
    assert view.name_edit.text() == MNIST_VALUE
    assert view.type_label.text().startswith("float32 [1, 8, 28, 28]")
    assert view.caption_label.isVisible() and "Relu" in view.caption_label.text()
    stats = _stats(view)
    x = a.astype(np.float64)
    assert stats["Min"] == f"{x.min():.6g}"
    assert stats["Max"] == f"{x.max():.6g}"
    assert stats["Mean"] == f"{x.mean():.6g}"
    assert stats["Std"] == f"{x.std():.6g}"
    zeros = int((a == 0).sum())
    assert zeros > 0 and stats["Zeros"] == f"{zeros / a.size:.2%} ({zeros:,})"
    assert stats["NaN"] == "0" and stats["Inf"] == "0"
    assert stats["Size"] == human_bytes(a.nbytes) == "24.5 KB"


def test_histogram_hover_names_bin_range_and_count(view, mnist_activation) -> None:
    a = mnist_activation
    view.show_tensor(MNIST_VALUE, a)
    counts, edges = np.histogram(a.astype(np.float64).ravel(), bins=64)
    plot = view.histogram.plot_rect()
    x = plot.left() + plot.width() * 10.5 / 64
    assert view.histogram.bin_at(x) == 10
    text = view.histogram.tooltip_at(x)
    assert f"[{edges[10]:.6g}, {edges[11]:.6g})" in text
    assert f"{int(counts[10]):,} values" in text
    assert view.histogram.tooltip_at(plot.right() + 2) is None


def test_table_shows_the_chosen_channel_exactly(view, mnist_activation) -> None:
    a = mnist_activation
    view.show_tensor(MNIST_VALUE, a)
    model = view.table_model()
    assert (model.rowCount(), model.columnCount()) == (28, 28)
    assert view.leading_indices() == [0, 0]
    view.set_leading_indices([0, 5])
    assert view.leading_indices() == [0, 5]
    for r in range(28):
        for c in range(28):
            assert _cell(view, r, c) == f"{float(a[0, 5, r, c]):.6g}"
    labels = [w.text() for w in view.index_box.findChildren(QLabel)]
    assert labels == ["dim 0 (0–0)", "dim 1 (0–7)"]
    with pytest.raises(IndexError):
        view.set_leading_indices([0, 8])
    with pytest.raises(ValueError):
        view.set_leading_indices([0])


def test_clicking_a_tile_selects_its_channel_in_the_table(qtbot, view,
                                                         mnist_activation) -> None:
    a = mnist_activation
    view.show_tensor(MNIST_VALUE, a)
    view.tabs.setCurrentIndex(view.maps_tab)
    assert view.tabs.isTabVisible(view.maps_tab)
    channel = 6
    r, c = np.unravel_index(int(np.argmax(a[0, channel])), a.shape[2:])
    assert _cell(view, r, c) != f"{float(a[0, channel, r, c]):.6g}"  # channel 0 shown
    _click_tile(qtbot, view, channel)
    assert view.leading_indices() == [0, channel]
    assert view.index_spins()[1].value() == channel
    assert _cell(view, r, c) == f"{float(a[0, channel, r, c]):.6g}"
    assert view.tabs.currentIndex() == view.maps_tab  # a click only selects
    _click_tile(qtbot, view, 2, double=True)
    assert view.leading_indices() == [0, 2]
    assert view.tabs.currentIndex() == view.values_tab  # a double-click opens it


def test_grid_pixels_follow_the_chosen_normalisation(view, mnist_activation) -> None:
    a = mnist_activation
    view.show_tensor(MNIST_VALUE, a)
    view.tabs.setCurrentIndex(view.maps_tab)
    assert "8 channels" in view.maps.grid_note.text()
    maxima = a[0].reshape(8, -1).max(axis=1)
    weak = int(np.argmin(maxima))
    r, c = np.unravel_index(int(np.argmax(a[0, weak])), a.shape[2:])

    def pixel(channel: int) -> int:
        grid = view.feature_grid()
        image = view.grid_image()
        assert image is not None and image.width() == grid.image.shape[1]
        t = grid.tiles[channel]
        return image.pixelColor(t.x + c * grid.cell, t.y + r * grid.cell).red()

    assert pixel(weak) == 255  # per map: its own maximum is white
    view.maps.scale_combo.setCurrentIndex(view.maps.scale_combo.findData("global"))
    expected = round(float(maxima[weak]) / float(a.max()) * 255)  # global min is 0
    assert expected < 200
    assert abs(pixel(weak) - expected) <= 1


def test_mosaic_tooltip_names_channel_range_and_value(view, mnist_activation) -> None:
    a = mnist_activation
    view.show_tensor(MNIST_VALUE, a)
    view.tabs.setCurrentIndex(view.maps_tab)
    grid = view.feature_grid()
    t = grid.tiles[3]
    text = view.maps.mosaic_tooltip(t.x + 14 * grid.cell, t.y + 9 * grid.cell)
    assert text.startswith(f"channel 3: min {a[0, 3].min():.6g}, max {a[0, 3].max():.6g}")
    assert f"[0, 3, 9, 14] = {float(a[0, 3, 9, 14]):.6g}" in text
    assert view.maps.mosaic_tooltip(0, 0) is None  # the outer gap


def test_mosaic_wraps_to_the_dock_width(qtbot, view) -> None:
    a = np.random.default_rng(2).random((1, 256, 7, 7)).astype(np.float32)
    view.show_tensor("many", a)
    view.tabs.setCurrentIndex(view.maps_tab)
    assert "showing 64 of 256 channels" in view.maps.grid_note.text()
    assert view.feature_grid().image.shape[1] <= view.maps.grid_scroll.viewport().width()
    view.resize(280, 900)
    qtbot.waitUntil(lambda: view.feature_grid().image.shape[1]
                    <= view.maps.grid_scroll.viewport().width())
    assert view.feature_grid().tiles[0].w >= 48


def test_feature_maps_only_for_spatial_float_tensors(view) -> None:
    cases = [np.zeros((4, 5), np.float32), np.zeros((1, 8, 4, 4), np.int64),
             np.zeros((1, 512, 1, 1), np.float32), np.zeros((2, 3, 4, 5, 6), np.float32)]
    for arr in cases:
        view.show_tensor("x", arr)
        assert not view.tabs.isTabVisible(view.maps_tab), arr.shape
        assert view.grid_image() is None
    view.show_tensor("maps", np.ones((3, 5, 5), np.float32))
    assert view.tabs.isTabVisible(view.maps_tab)
    assert view.grid_image() is not None


def test_empty_busy_error_states(view) -> None:
    assert view.placeholder_text() == EMPTY_TEXT
    assert view.current_name() is None and view.current_array() is None
    assert view.error_message() is None
    view.set_busy("Capturing conv1_out…")
    assert view.placeholder_text() == "Capturing conv1_out…"
    view.show_error("conv1_out: the run failed")
    assert view.error_message() == "conv1_out: the run failed"
    assert view.banner.isVisible()
    assert view.placeholder_text() == EMPTY_TEXT  # nothing was shown before

    arr = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    view.show_tensor("t", arr)
    assert view.error_message() is None  # a successful show replaces the error
    view.set_busy("Capturing next…")
    view.show_error("next: out of memory")
    assert view.placeholder_text() is None  # the previous tensor is back, usable
    assert view.current_name() == "t"
    view.set_leading_indices([1])
    assert _cell(view, 2, 3) == "23"
    view.banner.hide()
    assert view.error_message() is None

    view.clear("Model closed")
    assert view.placeholder_text() == "Model closed"
    assert view.current_array() is None and view.table_model().rowCount() == 0
    view.clear()
    assert view.placeholder_text() == EMPTY_TEXT


def test_error_banner_can_be_dismissed(qtbot, view) -> None:
    view.show_tensor("t", np.zeros(3, np.float32))
    view.show_error("boom")
    assert view.error_message() == "boom"
    qtbot.mouseClick(view.banner.findChild(QToolButton), Qt.MouseButton.LeftButton)
    assert view.error_message() is None and view.current_name() == "t"


def test_nan_and_inf_counts_are_red(view) -> None:
    arr = np.array([[1.0, np.nan, np.inf], [np.nan, -2.0, 0.0]], np.float32)
    view.show_tensor("bad", arr)
    stats = _stats(view)
    assert (stats["NaN"], stats["Inf"]) == ("2", "1")
    assert (stats["Min"], stats["Max"]) == ("-2", "1")  # finite values only
    for key in ("nan", "inf"):
        label = view.stat_labels[key]
        assert label.palette().color(QPalette.ColorRole.WindowText) == ALERT
    assert _cell(view, 0, 1) == "nan" and _cell(view, 0, 2) == "inf"
    view.show_tensor("good", np.ones((2, 2), np.float32))
    for key in ("nan", "inf"):
        label = view.stat_labels[key]
        assert label.palette().color(QPalette.ColorRole.WindowText) != ALERT


def test_one_d_zero_d_int_and_bool_tensors(view) -> None:
    vec = np.linspace(0, 1, 11, dtype=np.float64)
    view.show_tensor("vec", vec)
    model = view.table_model()
    assert (model.rowCount(), model.columnCount()) == (11, 1)
    assert model.headerData(0, Qt.Orientation.Horizontal) == "value"
    assert _cell(view, 7, 0) == f"{vec[7]:.6g}"
    assert view.leading_indices() == [] and view.index_box.isHidden()

    view.show_tensor("scalar", np.array(3.25, np.float32))
    assert (model.rowCount(), model.columnCount()) == (1, 1)
    assert _cell(view, 0, 0) == "3.25"
    assert view.type_label.text().startswith("float32 scalar")

    ints = np.array([[123456789, -7], [0, 2**31 - 1]], np.int32)
    view.show_tensor("ints", ints)
    assert _cell(view, 0, 0) == "123456789"  # exact, not 1.23457e+08
    assert _cell(view, 1, 1) == "2147483647"
    stats = _stats(view)
    assert (stats["Min"], stats["Max"]) == ("-7", "2147483647")

    flags = np.array([True, False, False, True, False])
    view.show_tensor("flags", flags)
    assert [_cell(view, i, 0) for i in range(5)] == ["True", "False", "False", "True", "False"]
    assert _stats(view)["Zeros"] == "60.00% (3)"


def test_million_values_are_shown_through_a_view_not_copied(view) -> None:
    big = np.arange(1_000_000, dtype=np.float32)
    view.show_tensor("big", big)
    model = view.table_model()
    assert model.rowCount() == 1_000_000
    assert np.shares_memory(model.matrix(), big)
    assert _cell(view, 999_999, 0) == "999999"
    assert view.table.verticalHeader().count() == 1_000_000


def test_spin_boxes_pick_slices_of_n_d_tensors(view) -> None:
    arr = np.arange(2 * 3 * 4 * 5 * 6, dtype=np.int64).reshape(2, 3, 4, 5, 6)
    view.show_tensor("nd", arr)
    labels = [w.text() for w in view.index_box.findChildren(QLabel)]
    assert labels == ["dim 0 (0–1)", "dim 1 (0–2)", "dim 2 (0–3)"]
    view.index_spins()[0].setValue(1)
    view.index_spins()[2].setValue(3)
    assert view.leading_indices() == [1, 0, 3]
    model = view.table_model()
    assert (model.rowCount(), model.columnCount()) == (5, 6)
    assert _cell(view, 4, 5) == str(arr[1, 0, 3, 4, 5])
    assert "rows: dim 3 (5)" in view.slice_label.text()
    # Another tensor of the same shape keeps the slice (stepping through layers).
    view.show_tensor("nd2", arr * 2)
    assert view.leading_indices() == [1, 0, 3]
    assert _cell(view, 4, 5) == str(arr[1, 0, 3, 4, 5] * 2)


def test_long_names_and_many_dims_do_not_widen_the_dock(view) -> None:
    name = "/model/backbone/" + "very_long_scope/" * 20 + "Conv_output_0"
    caption = f"output 0 of Conv '{name}' (n12345)"
    view.show_tensor(name, np.zeros((1, 2, 1, 3, 1, 2, 4, 4), np.float32), caption)
    assert view.minimumSizeHint().width() < 380
    assert view.name_edit.text() == name  # copied exactly, no hidden break characters


def test_a_tensor_with_unit_dims_is_a_table_of_its_values(view) -> None:
    """[1,1000,1,1] (a classifier's logits) is a column of 1,000 values, not one elided
    cell and a spin box to step through them."""
    logits = np.linspace(-1, 1, 1000, dtype=np.float32).reshape(1, 1000, 1, 1)
    view.show_tensor("logits", logits)
    model = view.table_model()
    assert (model.rowCount(), model.columnCount()) == (1000, 1)
    assert view.index_spins() == [] and view.index_box.isHidden()
    assert _cell(view, 999, 0) == f"{logits[0, 999, 0, 0]:.6g}"
    assert view.slice_label.text() == "rows: index in dim 1"
    view.show_tensor("pair", np.arange(12, dtype=np.int64).reshape(1, 3, 1, 4))
    assert (model.rowCount(), model.columnCount()) == (3, 4)
    assert view.slice_label.text() == "rows: dim 1 (3) · columns: dim 3 (4)"
