"""Any input, folders and honest results: symbolic non-image models on random/zero inputs,
.wav and .npy clips, the dims syntax, a folder run with accuracy, EXIF orientation and
dtype-aware tolerances."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from onnxstudio.cli import main
from onnxstudio.errors import InputError
from onnxstudio.runner.audio import read_wav
from onnxstudio.runner.folder import collect, run_folder, summarise, to_csv
from onnxstudio.runner.images import load_image
from onnxstudio.runner.inputs import read_model_info
from onnxstudio.runner.pipeline import Pipeline, RunRequest
from onnxstudio.runner.synthetic import default_dim_sizes, parse_dim_sizes, synthetic_feeds
from onnxstudio.runner.tolerance import describe, relative_for
from tests.conftest import shared_model

VAD = "packaged/silero_vad/silero_vad_16k_op15.onnx"


def test_voice_activity_model_runs_on_random_inputs_with_audio_sized_dims() -> None:
    model = shared_model(VAD)
    specs = read_model_info(model).inputs
    assert default_dim_sizes(specs) == {"batch": 1, "sequence": 512}
    feeds = synthetic_feeds(specs)
    assert feeds["input"].shape == (1, 512) and int(feeds["sr"]) == 16000
    assert not feeds["state"].any()  # recurrent state starts at zero
    (out,) = Pipeline().execute(RunRequest(model, random=True))
    assert out.views[0].shape == [1, 1] and 0 <= out.views[0].stats["max"] <= 1


def test_text_model_gets_a_few_tokens_and_masks_of_ones() -> None:
    model = shared_model("ortdata/onnxruntime/test/testdata/bert_toy_optimized.onnx")
    feeds = synthetic_feeds(read_model_info(model).inputs)
    assert feeds["input_ids"].shape == (1, 8) and (feeds["input_mask"] == 1).all()
    assert not feeds["token_type_ids"].any()
    (out,) = Pipeline().execute(RunRequest(model, random=True))
    assert out.views


def test_dims_syntax_is_exactly_what_the_hint_says() -> None:
    assert parse_dim_sizes("batch=2, sequence=1024") == {"batch": 2, "sequence": 1024}
    assert parse_dim_sizes("batch=2; sequence=4 x:0=3") == {"batch": 2, "sequence": 4,
                                                             "x:0": 3}
    with pytest.raises(InputError, match=r"expected NAME=SIZE, NAME=SIZE"):
        parse_dim_sizes("batch: 2")
    specs = read_model_info(shared_model(VAD)).inputs
    with pytest.raises(InputError, match=r"no symbolic dimension named seq .*batch, sequence"):
        synthetic_feeds(specs, {"seq": 4})


def _wav(path: Path, samples: np.ndarray, rate: int = 16000) -> Path:
    """A mono 32-bit float WAV (format 3), which the stdlib `wave` module cannot read."""
    data = samples.astype("<f4").tobytes()
    fmt = struct.pack("<HHIIHH", 3, 1, rate, rate * 4, 4, 32)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + \
        struct.pack("<I", len(data)) + data
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return path


def test_wav_and_npy_clips_feed_the_audio_input(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    model = shared_model(VAD)
    # silero takes one 512-sample window at 16 kHz per call
    tone = (0.5 * np.sin(np.arange(512) / 16000 * 2 * np.pi * 440)).astype(np.float32)
    clip = read_wav(_wav(tmp_path / "tone.wav", tone))
    assert clip.rate == 16000 and np.array_equal(clip.samples, tone)
    assert main(["run", str(model), str(tmp_path / "tone.wav"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["input"] == "tone.wav"
    np.save(tmp_path / "tone.npy", tone[None])
    (out,) = Pipeline().execute(RunRequest(model, npy={"": tmp_path / "tone.npy"}))
    assert {f.name: f.shape for f in out.fed}["input"] == [1, 512]


def test_folder_run_gives_rows_accuracy_confusion_and_csv(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    digit = Image.open(shared_model("images/digit_3.jpg"))
    for folder, img in (("3", digit), ("3", digit.rotate(5)), ("7", digit)):
        (tmp_path / "digits" / folder).mkdir(parents=True, exist_ok=True)
        img.save(tmp_path / "digits" / folder / f"{len(list(tmp_path.rglob('*.png')))}.png")
    (tmp_path / "digits" / "notes.txt").write_text("not an image")
    (tmp_path / "digits" / "broken.png").write_bytes(b"\x89PNG nope")
    items = collect(tmp_path / "digits")
    assert [i.truth for i in items] == ["3", "3", "7", None]
    rows = list(run_folder(Pipeline(), RunRequest(model), items))
    assert [r.label for r in rows[:3]] == ["3", "3", "3"] and "broken.png" in rows[3].error
    summary = summarise(rows)
    assert summary.accuracy == pytest.approx(2 / 3) and summary.errors == 1
    assert summary.classes == ["3", "7"] and summary.matrix == [[2, 0], [1, 0]]
    assert to_csv(rows).splitlines()[1].startswith("3/0.png,3,3,3,")
    assert main(["run", str(model), str(tmp_path / "digits"), "--json"]) == 0
    lines = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert lines[-1]["summary"]["accuracy"] == pytest.approx(2 / 3)
    assert [ln["correct"] for ln in lines[:3]] == [True, True, False]


def test_exif_rotated_photo_is_turned_upright(tmp_path: Path) -> None:
    upright = np.zeros((40, 20, 3), np.uint8)  # portrait: red on top, blue below
    upright[:20] = (255, 0, 0)
    upright[20:] = (0, 0, 255)
    stored = Image.fromarray(upright).transpose(Image.Transpose.ROTATE_90)  # as a phone stores
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to view
    stored.save(tmp_path / "phone.jpg", exif=exif.tobytes(), quality=95)
    with Image.open(tmp_path / "phone.jpg") as on_disk:
        assert on_disk.size == (40, 20)  # sideways on disk
    shown = load_image(tmp_path / "phone.jpg")
    assert shown.shape == (40, 20, 3)
    assert shown[5, 10, 0] > 200 and shown[35, 10, 2] > 200


def test_tolerance_follows_the_dtype_and_says_which() -> None:
    assert relative_for("float16") == 2e-3 and relative_for("float32") == 1e-3
    assert relative_for(np.float16, 1e-5) == 1e-5
    note = describe(["float16", "float32"])
    assert "2e-3 for float16" in note and "1e-3 for float32" in note and "significant" in note
    assert "yours" in describe(["float16"], 1e-4)


def test_one_fp16_ulp_is_not_a_divergence_but_a_real_difference_is() -> None:
    from onnxstudio.runner.compare import difference

    a = np.array([4.0, 5.5, -6.25], np.float16)
    ulp = np.nextafter(a, np.float16(np.inf)).astype(np.float16)  # 4.0 -> 4.0039
    assert float(ulp[0] - a[0]) == pytest.approx(0.0039, abs=1e-4)
    assert not difference("y", a, ulp).exceeds  # default: 2e-3 × max(1, 6.25)
    assert difference("y", a.astype(np.float32), ulp.astype(np.float32), 1e-4).exceeds
    assert difference("y", a, a + np.float16(0.25)).exceeds


def test_a_long_clip_is_streamed_in_windows_with_the_state_carried(tmp_path: Path) -> None:
    """silero refuses a 1 s clip whole; it is fed as 32 windows of 512 samples (the last
    one padded, and said so), its state output fed back as the next window's state, one
    speech probability per window, plotted in the window's Run panel."""
    model = shared_model(VAD)
    second = (0.3 * np.sin(np.arange(16000) / 16000 * 2 * np.pi * 220)).astype(np.float32)
    (out,) = Pipeline().execute(RunRequest(model, audio=_wav(tmp_path / "long.wav", second)))
    assert out.source == ("long.wav — 32 windows of 512 samples (the last padded with 384 "
                          "zeros), state carried")
    (prob,) = out.views  # stateN is carried, not shown
    assert prob.shape == [32, 1, 1] and prob.kind == "tensor" and not prob.top
    assert 0 <= prob.stats["min"] <= prob.stats["max"] <= 1
    assert len(prob.as_json()["values"]) == 32  # one speech probability per window in --json
    assert prob.series == prob.as_json()["values"] and prob.series_step_s == 0.032


def test_audio_probabilities_are_plotted_per_window(tmp_path: Path, qtbot) -> None:
    from onnxstudio.ui.insight.run_results import RunResults

    second = (0.3 * np.sin(np.arange(16000) / 16000 * 2 * np.pi * 220)).astype(np.float32)
    outcomes = Pipeline().execute(RunRequest(shared_model(VAD),
                                             audio=_wav(tmp_path / "long.wav", second)))
    results = RunResults()
    qtbot.addWidget(results)
    results.show()
    assert results.series_plot.isHidden()
    results.show_outcomes(outcomes)
    assert not results.series_plot.isHidden()
    assert results.series_caption.text() == "output per 32 ms window"
    assert len(results.series_plot.values) == 32 and results.series_plot.value_range() == (0, 1)
    picture = results.series_plot.grab().toImage()
    assert picture.width() > 0 and picture.height() >= 110
    results.clear()
    assert results.series_plot.isHidden()


def test_imagenet_folders_named_by_wordnet_id_are_ground_truth(tmp_path: Path, qtbot,
                                                               capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    from onnxstudio.runner.labels import bundled_imagenet, bundled_wordnet_ids
    from onnxstudio.ui.insight.folder_view import FolderView

    model = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    cat = Image.open(shared_model("images/chelsea.png")).convert("RGB")
    for wnid in ("n02123045", "n01440764"):  # tabby, tench
        (tmp_path / "val" / wnid).mkdir(parents=True)
        cat.save(tmp_path / "val" / wnid / "chelsea.png")
    assert len(bundled_wordnet_ids()) == len(bundled_imagenet()) == 1000
    rows = list(run_folder(Pipeline(), RunRequest(model), collect(tmp_path / "val")))
    assert [r.truth_label for r in rows] == ["tench", "tabby"]
    assert all(r.correct is not None for r in rows)
    summary = summarise(rows)
    assert summary.accuracy is not None and summary.truths == 2
    assert summary.classes[:2] == ["tabby", "tench"]
    predicted = sorted({r.label for r in rows} - {"tabby", "tench"})
    assert summary.classes[2:] == predicted
    assert main(["run", str(model), str(tmp_path / "val"), "--json"]) == 0
    confusion = json.loads(capsys.readouterr().out.splitlines()[-1])["summary"]["confusion"]
    assert confusion["truth_classes"] == ["tabby", "tench"]
    assert confusion["predicted_only"] == predicted
    # The window: file names first, truth as the folder and its class, the matrix's rows
    # only the truth classes and its predicted-only columns marked.
    view = FolderView()
    qtbot.addWidget(view)
    view.start(len(rows), "val")
    for row in rows:
        view.add_row(row)
    view.finish()
    assert view.table.horizontalHeaderItem(0).text() == "File"
    assert view.table.item(0, 0).text() == "n01440764/chelsea.png"
    assert view.table.item(0, 4).text().endswith("n01440764 (tench)")
    assert view.confusion.rowCount() == 2
    headers = [view.confusion.horizontalHeaderItem(c).text()
               for c in range(view.confusion.columnCount())]
    assert headers[:2] == ["tabby", "tench"]
    assert all(h.endswith("(predicted only)") for h in headers[2:])
