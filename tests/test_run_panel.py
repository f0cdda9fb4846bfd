"""The run panel, driven like a user: drop/open images, random inputs, cancel, errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent, QGuiApplication, QImage
from PySide6.QtWidgets import QApplication, QLabel

from onnxstudio.ui.insight.run_panel import RunPanel
from onnxstudio.ui.widgets.images import array_from_qimage, qimage_from_array
from tests.conftest import shared_model
from tests.drops import drag_enter
from tests.runner_models import refused_model, slow_model

TIMEOUT = 60_000


@pytest.fixture
def panel(qtbot) -> Iterator[RunPanel]:
    p = RunPanel()
    qtbot.addWidget(p)
    p.resize(480, 900)
    p.show()
    yield p
    p.shutdown()


def finish(qtbot, panel: RunPanel, action) -> list:
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT) as blocker:
        action()
    return blocker.args[0]


def test_mnist_digit_shows_top_k_with_labels_thumbnail_and_tensor(qtbot, panel: RunPanel
                                                                  ) -> None:
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    image = shared_model("images/digit_3.jpg")
    outcomes = finish(qtbot, panel, lambda: panel.open_images([image]))
    assert len(outcomes) == 1
    assert panel.results.top_table.isVisible()
    assert panel.results.top_table.item(0, 0).text() == "3"
    assert "labels: class indices, softmax applied" in panel.results.top_caption.text()
    bar = panel.results.top_table.cellWidget(0, 1)
    assert bar.value() > 900
    assert "float32[1, 1, 28, 28]" in panel.results.fed_label.text()
    assert "range [0" in panel.results.fed_label.text()
    assert not panel.results.thumbnail.pixmap().isNull()
    assert panel.results.latency_label.text().startswith("Latency ")


def test_the_answer_scrolls_into_view_in_a_short_panel(qtbot, panel: RunPanel) -> None:
    """Below the choices, the top-k table starts under the fold of a 1280x800 window: a
    finished run scrolls it into view, whole."""
    panel.resize(480, 520)
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    table = panel.results.top_table
    finish(qtbot, panel, lambda: panel.open_images([shared_model("images/digit_3.jpg")]))
    qtbot.waitUntil(lambda: table.visibleRegion().boundingRect().height() == table.height())
    assert panel.scroll_area.verticalScrollBar().value() > 0
    assert table.item(0, 0).text() == "3"


def test_what_was_fed_wraps_long_metadata_keys_inside_a_narrow_panel(qtbot, panel: RunPanel
                                                                      ) -> None:
    """The sample model's reasons quote "Image.NominalPixelRange=NominalRange_0_255": in a
    narrow dock every piece of it fits the label (it wraps at the separators, not past
    the edge), and Copy gives the text without the break points."""
    from onnxstudio.resources import resource
    from onnxstudio.ui.widgets.wrapping import plain

    panel.resize(340, 900)
    panel.set_model(resource("sample", "digits_cnn.onnx"))
    finish(qtbot, panel, lambda: panel.open_images([resource("sample", "digit_7.png")]))
    label = panel.results.fed_label
    qtbot.waitUntil(lambda: label.width() > 0)
    text = label.text()
    assert "Image.NominalPixelRange=NominalRange_0_255" in plain(text)
    metrics = label.fontMetrics()
    pieces = [p for line in text.split("\n") for word in line.split(" ") for p in
              word.split("\u200b")]
    assert max(metrics.horizontalAdvance(p) for p in pieces) <= label.width(), label.width()
    label.actions()[0].trigger()
    assert QGuiApplication.clipboard().text() == plain(text) and "\u200b" not in plain(text)


def test_drop_event_with_file_urls_runs_the_image(qtbot, panel: RunPanel) -> None:
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(shared_model("images/digit_3.jpg")))])
    enter = drag_enter(QPoint(10, 10), mime)
    assert QApplication.sendEvent(panel, enter) and enter.isAccepted()
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT):
        QApplication.sendEvent(panel, event)
    assert panel.results.top_table.item(0, 0).text().startswith("3")


def test_style_transfer_shows_an_image(qtbot, panel: RunPanel) -> None:
    panel.set_model(shared_model("zoo/style_transfer/fns-candy.onnx"))
    finish(qtbot, panel, lambda: panel.open_images([shared_model("images/chelsea.png")]))
    label = panel.findChild(QLabel, "output-image:outputImage")
    assert label is not None and not label.pixmap().isNull()
    assert not panel.results.top_table.isVisible()


def test_sequence_of_maps_is_displayed(qtbot, panel: RunPanel) -> None:
    panel.set_model(shared_model("packaged/onnxruntime_datasets/logreg_iris.onnx"))
    finish(qtbot, panel, panel.run_random)
    table = panel.results.outputs_table
    kinds = [table.item(r, 1).text() for r in range(table.rowCount())]
    assert kinds == ["tensor", "sequence"]
    assert panel.results.values_table.isVisible()
    assert "0: " in panel.results.values_table.item(0, 1).text()  # {class: probability} entries
    assert panel.results.top_table.isVisible()  # the first map as top-k


def test_refused_model_gives_a_clear_non_modal_message(qtbot, panel: RunPanel,
                                                       tmp_path: Path) -> None:
    panel.set_model(refused_model(tmp_path / "bogus.onnx"))
    with qtbot.waitSignal(panel.runFailed, timeout=TIMEOUT) as blocker:
        panel.run_random()
    assert blocker.args[0].startswith("bogus.onnx: onnxruntime cannot load this model")
    assert "FrobnicateTensor" in panel.error_text()
    assert panel.inputs.random_button.isEnabled()  # still usable
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    assert panel.error_text() == ""
    finish(qtbot, panel, lambda: panel.open_images([shared_model("images/digit_3.jpg")]))


def test_bad_images_get_a_message_and_nothing_else(qtbot, panel: RunPanel, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxstudio.runner import images

    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    finish(qtbot, panel, lambda: panel.open_images([shared_model("images/digit_3.jpg")]))
    cut = tmp_path / "cut.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), np.uint8)).save(cut)
    cut.write_bytes(cut.read_bytes()[:300])
    with qtbot.waitSignal(panel.runFailed, timeout=TIMEOUT) as blocker:
        panel.open_images([cut])
    assert blocker.args[0].startswith("cut.png: ")
    # the earlier answer is gone: nothing under the banner can pass for this file's result
    assert panel.results.top_table.isHidden() and panel.results.top_table.rowCount() == 0
    assert panel.outcomes() == [] and panel.results.thumbnail.pixmap().isNull()
    monkeypatch.setattr(images, "MAX_PIXELS", 1000)
    bomb = tmp_path / "bomb.png"
    Image.new("L", (64, 64)).save(bomb)
    with qtbot.waitSignal(panel.runFailed, timeout=TIMEOUT) as blocker:
        panel.open_images([bomb])
    assert "bomb.png: image too large" in panel.error_text()
    assert not panel.open_images([tmp_path / "notes.txt"])
    assert "notes.txt: not an image" in panel.error_text()


def test_gui_stays_responsive_and_cancel_works(qtbot, panel: RunPanel, tmp_path: Path) -> None:
    panel.set_model(slow_model(tmp_path / "slow.onnx"))
    ticks: list[bool] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(panel.controller.busy))
    timer.start()
    with qtbot.waitSignal(panel.controller.started, timeout=TIMEOUT):
        panel.run_random()
    # The model runs for seconds; the GUI thread's timer keeps firing meanwhile.
    qtbot.waitUntil(lambda: sum(ticks) >= 10, timeout=TIMEOUT)
    assert panel.controller.busy and panel.controls.cancel_button.isEnabled()
    with qtbot.waitSignal(panel.controller.cancelled, timeout=TIMEOUT):
        panel.controls.cancel_button.click()
    timer.stop()
    assert panel.controls.status_label.text() == "Cancelled"
    assert not panel.controller.busy
    assert panel.outcomes() == []


def test_new_request_supersedes_a_running_one(qtbot, panel: RunPanel, tmp_path: Path) -> None:
    panel.set_model(slow_model(tmp_path / "slow.onnx"))
    seen: list[list] = []
    panel.runFinished.connect(seen.append)
    with qtbot.waitSignal(panel.controller.started, timeout=TIMEOUT):
        panel.run_random()
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    finish(qtbot, panel, lambda: panel.open_images([shared_model("images/digit_3.jpg")]))
    qtbot.wait(50)
    assert len(seen) == 1 and seen[0][0].source == "digit_3.jpg"


def test_benchmark_reports_median_and_p90(qtbot, panel: RunPanel) -> None:
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    finish(qtbot, panel, lambda: panel.open_images([shared_model("images/digit_3.jpg")]))
    (out,) = finish(qtbot, panel, lambda: panel.benchmark(5))
    assert len(out.benchmark.times_ms) == 5
    latency = panel.results.latency_label.text()
    assert "median" in latency and "p90" in latency


def test_paste_from_clipboard(qtbot, panel: RunPanel) -> None:
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    with Image.open(shared_model("images/digit_3.jpg")) as img:
        rgb = np.asarray(img.convert("RGB"))
    QGuiApplication.clipboard().setImage(qimage_from_array(rgb))
    (out,) = finish(qtbot, panel, panel.paste_image)
    assert out.source == "clipboard image"
    assert panel.results.top_table.item(0, 0).text().startswith("3")


def test_choices_are_remembered_per_model_and_session_globally(qtbot, tmp_path: Path) -> None:
    a, b = shared_model("zoo/mnist/mnist.onnx"), shared_model("zoo/style_transfer/fns-candy.onnx")
    first = RunPanel()
    qtbot.addWidget(first)
    first.set_model(a)
    first.choices.preset_combo.setCurrentText("symmetric")
    first.choices.resize_combo.setCurrentText("letterbox")
    first.choices.optimization_combo.setCurrentText("basic")
    first.choices.threads_spin.setValue(2)
    first.set_model(b)
    assert first.choices.preset_combo.currentText() == "auto"
    first.set_model(a)
    assert first.choices.preset_combo.currentText() == "symmetric"
    assert first.choices.resize_combo.currentText() == "letterbox"
    first.shutdown()
    second = RunPanel()
    qtbot.addWidget(second)
    assert second.choices.optimization_combo.currentText() == "basic"
    assert second.choices.threads_spin.value() == 2
    second.set_model(a)
    assert second.options().preset == "symmetric"
    second.shutdown()


def test_qimage_round_trip() -> None:
    rgb = np.random.default_rng(0).integers(0, 255, (7, 5, 3), np.uint8)
    assert np.array_equal(array_from_qimage(qimage_from_array(rgb)), rgb)
    assert QImage(qimage_from_array(rgb[:, :, 0])).format() == QImage.Format.Format_Grayscale8


def test_rapid_drops_show_only_the_last_result(qtbot, panel: RunPanel, tmp_path: Path) -> None:
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    digit = shared_model("images/digit_3.jpg")
    names = []
    for i in range(5):
        copy = tmp_path / f"drop{i}.jpg"
        copy.write_bytes(digit.read_bytes())
        names.append(copy)
    seen: list[list] = []
    panel.runFinished.connect(seen.append)
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT):
        for path in names:
            panel.open_images([path])
    qtbot.wait(100)
    assert [o[0].source for o in seen] == ["drop4.jpg"]


@pytest.mark.parametrize("share", [0.973, 0.42, 0.02])
def test_top_k_percentage_reads_over_its_bar(qtbot, share: float) -> None:
    """The text drawn on a top-k bar stands out from what is under it (Fusion's centred
    text was white on pale grey across the chunk's edge)."""
    from onnxstudio.ui.widgets.share_bar import ShareBar

    bar = ShareBar(share)
    qtbot.addWidget(bar)
    bar.resize(160, 18)
    with_text = bar.grab().toImage()
    bar.setFormat("")
    plain_bar = bar.grab().toImage()
    contrasts = [abs(with_text.pixelColor(x, y).lightness()
                     - plain_bar.pixelColor(x, y).lightness())
                 for x in range(with_text.width()) for y in range(with_text.height())]
    assert max(contrasts) > 120
