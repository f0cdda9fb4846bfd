"""The run panel for what is not a plain classifier: a detector's boxes with a threshold, a
folder table with accuracy, an audio model's controls, presets side by side, and the
preprocessing remembered by content."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from onnxstudio.ui.insight.run_panel import RunPanel
from tests.conftest import shared_model

TIMEOUT = 120_000


@pytest.fixture
def panel(qtbot) -> Iterator[RunPanel]:
    p = RunPanel()
    qtbot.addWidget(p)
    p.resize(520, 1000)
    p.show()
    yield p
    p.shutdown()


def run(qtbot, panel: RunPanel, action, signal: str = "runFinished") -> list:
    with qtbot.waitSignal(getattr(panel, signal), timeout=TIMEOUT) as blocker:
        assert action() is not False
    return blocker.args[0]


def test_face_detector_shows_boxes_on_the_photo_with_a_threshold(qtbot, panel: RunPanel) -> None:
    panel.set_model(shared_model("ortdata/examples/Ultraface.version-RFB-320.onnx"))
    run(qtbot, panel, lambda: panel.open_images([shared_model("images/camera.png")]))
    view = panel.results.detection_view
    assert view.isVisible() and not view.image.pixmap().isNull()
    assert view.shown_count() == 1 and "object" in view.found.text()
    assert "original image's pixels (512×512)" in view.caption.text()
    fed = panel.results.fed_label.text()
    assert "centred128" in fed and "face detector" in fed
    view.set_threshold(0.05)
    assert view.shown_count() >= 1 and "0.05" in view.caption.text()
    view.set_threshold(1.0)
    assert view.shown_count() == 0 and "Nothing above" in view.found.text()


def test_a_dropped_folder_fills_the_table_with_accuracy_and_csv(qtbot, panel: RunPanel,
                                                                tmp_path: Path) -> None:
    digit = Image.open(shared_model("images/digit_3.jpg"))
    for folder, name in (("3", "a.png"), ("3", "b.png"), ("8", "c.png")):
        (tmp_path / "digits" / folder).mkdir(parents=True, exist_ok=True)
        digit.save(tmp_path / "digits" / folder / name)
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    rows = run(qtbot, panel, lambda: panel.open_images([tmp_path / "digits"]),
               "folderFinished")
    view = panel.results.folder_view
    assert len(rows) == 3 and view.table.rowCount() == 3
    assert [view.table.item(r, 1).text() for r in range(3)] == ["3", "3", "3"]
    assert not view.table.item(0, 0).icon().isNull()  # thumbnail
    assert "accuracy 66.7% over 3" in view.caption.text()
    assert view.confusion.isVisible() and view.confusion.item(1, 0).text() == "1"
    view.export_csv(tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_text().splitlines()[3].startswith("8/c.png,8,3,3,")


def test_loose_images_fill_the_table_without_talk_of_sub_folders(qtbot, panel: RunPanel,
                                                                  tmp_path: Path) -> None:
    """Two dropped photos are not a labelled folder: no accuracy, and no word about
    sub-folder names the user never gave."""
    digit = Image.open(shared_model("images/digit_3.jpg"))
    paths = [tmp_path / "a.png", tmp_path / "b.png"]
    for path in paths:
        digit.save(path)
    panel.set_model(shared_model("zoo/mnist/mnist.onnx"))
    rows = run(qtbot, panel, lambda: panel.open_images(paths), "folderFinished")
    caption = panel.results.folder_view.caption.text()
    assert len(rows) == 2 and caption == "done: 2 of 2 images, 0 failed"


def test_an_audio_model_gets_audio_controls_and_a_dims_hint(qtbot, panel: RunPanel) -> None:
    panel.set_model(shared_model("packaged/silero_vad/silero_vad_16k_op15.onnx"))
    assert panel.inputs.open_button.isHidden() and panel.choices.preset_combo.isHidden()
    assert not panel.inputs.wav_button.isHidden()
    assert panel.choices.dims_edit.placeholderText() == "batch=1, sequence=512"
    assert "NAME=SIZE, NAME=SIZE" in panel.choices.dims_edit.toolTip()
    (out,) = run(qtbot, panel, panel.run_random)
    assert out.fed[0].shape == [1, 512]
    panel.choices.dims_edit.setText("batch: 2")
    assert not panel.run_random() and "expected NAME=SIZE" in panel.error_text()


def test_weak_evidence_offers_presets_side_by_side(qtbot, panel: RunPanel) -> None:
    panel.set_model(shared_model("zoo/onnx_light/light_squeezenet.onnx"))
    run(qtbot, panel, lambda: panel.open_images([shared_model("images/chelsea.png")]))
    assert panel.results.presets_row.isVisible() and "caffe" in panel.results.presets_label.text()
    outcomes = run(qtbot, panel, panel.try_presets)
    assert [o.source.split(":")[0] for o in outcomes] == ["caffe", "bgr255", "imagenet"]
    table = panel.results.presets_table
    assert table.isVisible() and table.rowCount() == 3 and table.item(1, 0).text() == "bgr255"
    table.cellDoubleClicked.emit(1, 0)
    assert panel.choices.preset_combo.currentText() == "bgr255"


def test_choice_is_remembered_for_a_renamed_copy(qtbot, panel: RunPanel, tmp_path: Path) -> None:
    original = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    panel.set_model(original)
    panel.choices.preset_combo.setCurrentText("bgr255")
    copy = tmp_path / "renamed.onnx"
    shutil.copyfile(original, copy)
    panel.set_model(copy)
    assert panel.choices.preset_combo.currentText() == "bgr255"
    (out,) = run(qtbot, panel, lambda: panel.open_images([shared_model("images/coffee.png")]))
    assert any("remembered for this model" in r for r in out.preprocessed.plan.reasons)
    assert not panel.results.presets_row.isVisible()  # the user decided: no guess to question


def test_a_failed_run_clears_the_detector_overlay(qtbot, panel: RunPanel, tmp_path: Path) -> None:
    panel.set_model(shared_model("ortdata/examples/Ultraface.version-RFB-320.onnx"))
    run(qtbot, panel, lambda: panel.open_images([shared_model("images/camera.png")]))
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n broken")
    run(qtbot, panel, lambda: panel.open_images([bad]), "runFailed")
    assert not panel.results.detection_view.isVisible() and panel.outcomes() == []
