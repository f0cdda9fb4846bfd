"""Whole pipeline on real models: MNIST digit, style transfer, sequence/map outputs, super-
resolution recombination, labels from every source, and the CLI's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from PIL import Image

from onnxstudio.cli import main
from onnxstudio.errors import InputError
from onnxstudio.runner.labels import bundled_imagenet, parse_labels, resolve_labels
from onnxstudio.runner.pipeline import ImageSource, Pipeline, RunRequest
from onnxstudio.runner.postprocess import interpret, is_distribution, softmax
from onnxstudio.runner.preprocess import PreprocessOptions
from tests.conftest import shared_model
from tests.runner_models import nhwc_uint8_model, upscale_y_model


def run_image(model: Path, image: Path, **kw: object) -> list:
    return Pipeline().execute(RunRequest(model, images=[ImageSource(image.name, image)], **kw))


def test_mnist_classifies_the_digit_photo_as_3() -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    (out,) = run_image(model, shared_model("images/digit_3.jpg"))
    (view,) = out.views
    assert view.kind == "classification" and view.softmax_applied
    assert view.top[0].index == 3 and view.top[0].label == "3" and view.top[0].score > 0.9
    assert out.preprocessed.plan.channels == "gray"
    assert out.fed[0].shape == [1, 1, 28, 28]


def test_style_transfer_produces_an_image() -> None:
    model = shared_model("zoo/style_transfer/fns-candy.onnx")
    (out,) = run_image(model, shared_model("images/chelsea.png"))
    (view,) = out.views
    assert view.kind == "image"
    assert view.image is not None and view.image.shape == (720, 720, 3)
    assert view.image.dtype == np.uint8 and view.image.std() > 10
    assert out.preprocessed.plan.preset == "raw255"  # image-to-image models take 0-255


@pytest.mark.parametrize("relative", [
    "packaged/onnxruntime_datasets/logreg_iris.onnx",
    "ortdata/onnxruntime/test/testdata/sklearn_bin_voting_classifier_soft.onnx",
])
def test_sequence_of_maps_is_displayed(relative: str) -> None:
    model = shared_model(relative)
    (out,) = Pipeline().execute(RunRequest(model, random=True))
    seq = next(v for v in out.views if v.kind == "sequence")
    assert "maps" in seq.summary and seq.table and seq.top
    assert abs(sum(t.score for t in seq.top) - 1.0) < 1e-5  # a full distribution
    label = next(v for v in out.views if v.kind in ("tensor", "string"))  # the label output
    assert label.table and label.kind_reason


def test_super_resolution_y_is_recombined_with_colour(tmp_path: Path) -> None:
    model = upscale_y_model(tmp_path / "sr.onnx")
    image = shared_model("images/coffee.png")
    (out,) = run_image(model, image, options=PreprocessOptions(size=(64, 96)))
    assert out.preprocessed.plan.channels == "gray" and out.preprocessed.plan.preset == "unit"
    (view,) = out.views
    assert view.kind == "image" and view.image.shape == (192, 288, 3)
    colour = np.asarray(Image.fromarray(out.preprocessed.resized_rgb).resize(
        (288, 192), Image.Resampling.BICUBIC)).astype(float)
    assert np.abs(view.image.astype(float) - colour).mean() < 12
    assert np.abs(view.image[..., 0].astype(float) - view.image[..., 2]).mean() > 5  # colour


def test_uint8_nhwc_model_gets_raw_pixels(tmp_path: Path) -> None:
    model = nhwc_uint8_model(tmp_path / "u8.onnx")
    (out,) = run_image(model, shared_model("images/chelsea.png"))
    assert out.fed[0].dtype == "uint8" and out.fed[0].shape == [1, 224, 224, 3]


def test_softmax_only_when_not_a_distribution() -> None:
    probs = np.array([[0.1, 0.7, 0.2]], np.float32)
    (view,) = interpret({"p": probs})
    assert not view.softmax_applied and view.top[0].score == float(np.float32(0.7))
    (view,) = interpret({"l": np.array([[1.0, 3.0, 2.0]], np.float32)})
    assert view.softmax_applied and view.top[0].index == 1
    assert is_distribution(softmax(np.array([1.0, 2.0])))


def test_label_sources_in_order(tmp_path: Path) -> None:
    model = tmp_path / "net.onnx"
    model.write_bytes(b"")
    assert len(bundled_imagenet()) == 1000 and bundled_imagenet()[281] == "tabby"
    assert resolve_labels(1000).source == "bundled ImageNet-1k"
    with1001 = resolve_labels(1001)
    assert with1001.names[0] == "background" and with1001.names[1] == "tench"
    assert resolve_labels(3, model, class_labels=["a", "b", "c"]).source == "classifier node labels"
    (tmp_path / "labels.txt").write_text("cat\ndog\nbird\n")
    assert resolve_labels(3, model, class_labels=["a", "b", "c"]).names == ("cat", "dog", "bird")
    meta = {"labels": "x,y,z"}
    assert resolve_labels(3, model, meta).source == "model metadata 'labels'"
    user = tmp_path / "mine.txt"
    user.write_text("n01 one\nn02 two\nn03 three\n")
    assert resolve_labels(3, model, meta, user_file=user).names == ("n01 one", "n02 two",
                                                                   "n03 three")
    assert resolve_labels(7, model) is None  # nothing fits 7 classes
    assert parse_labels("{0: 'person', 1: 'bicycle'}") == ["person", "bicycle"]
    assert parse_labels("n01440764 tench, Tinca tinca\n") == ["tench, Tinca tinca"]


def test_cli_json_equals_bare_inference_session(capsys: pytest.CaptureFixture[str]) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    image = shared_model("images/digit_3.jpg")
    code = main(["run", str(model), str(image), "--json", "--top", "10",
                 "--resize", "stretch", "--preset", "raw255"])
    assert code == 0
    data = json.loads(capsys.readouterr().out.strip())
    assert data["preprocess"] == {"preset": "raw255", "channels": "gray", "layout": "nchw",
                                  "size": [28, 28], "resize": "stretch", "mean": [0.0],
                                  "std": [1.0], "scale": 1.0, "dtype": "float32"}
    (output,) = data["outputs"]
    assert {k: output[k] for k in ("name", "dtype", "shape")} == {
        "name": "Plus214_Output_0", "dtype": "float32", "shape": [1, 10]}
    assert data["input"] == str(image) and data["model"] == str(model)
    assert data["latency_ms"] > 0
    # The same tensor, made without the app, through a bare session.
    with Image.open(image) as img:
        gray = img.convert("RGB").resize((28, 28), Image.Resampling.BILINEAR).convert("L")
    x = np.asarray(gray, dtype=np.float32)[None, None]
    logits = ort.InferenceSession(str(model)).run(None, {"Input3": x})[0][0]
    assert output["values"] == [float(v) for v in logits]  # small outputs carry their values
    z = np.exp(logits.astype(np.float64) - logits.max())
    probs = z / z.sum()
    order = np.argsort(-probs, kind="stable")
    assert [t["index"] for t in data["top"]] == [int(i) for i in order]
    assert [t["score"] for t in data["top"]] == [float(probs[i]) for i in order]
    assert data["top"][0]["label"] == "3"


def test_cli_json_scores_are_the_raw_outputs_of_a_softmax_model(
        capsys: pytest.CaptureFixture[str]) -> None:
    model = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    image = shared_model("images/chelsea.png")
    assert main(["run", str(model), str(image), "--json", "--preset", "imagenet",
                 "--resize", "stretch", "--top", "3"]) == 0
    data = json.loads(capsys.readouterr().out.strip())
    with Image.open(image) as img:
        rgb = np.asarray(img.convert("RGB").resize((224, 224), Image.Resampling.BILINEAR))
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    x = ((rgb / 255.0 - mean) / std).astype(np.float32).transpose(2, 0, 1)[None]
    out = ort.InferenceSession(str(model)).run(None, {"data_0": x})[0].reshape(-1)
    order = np.argsort(-out.astype(np.float64), kind="stable")[:3]
    assert [t["score"] for t in data["top"]] == [float(out[i]) for i in order]
    assert data["top"][0]["label"] == bundled_imagenet()[int(order[0])]


def test_cli_reports_errors_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    bad = tmp_path / "broken.png"
    bad.write_text("nope")
    assert main(["run", str(model), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("onnxstudio: broken.png: not a readable image") and "\n" not in err


def test_cli_npy_input_and_random(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    x = np.random.default_rng(3).random((1, 1, 28, 28)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(model), str(tmp_path / "x.npy"), "--json", "--top", "1"]) == 0
    data = json.loads(capsys.readouterr().out.strip())
    assert data["preprocess"] is None and data["input"] == "x.npy"
    logits = ort.InferenceSession(str(model)).run(None, {"Input3": x})[0][0]
    z = np.exp(logits.astype(np.float64) - logits.max())
    assert data["top"][0]["score"] == float((z / z.sum()).max())
    assert main(["run", str(model), "--random", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["input"] == "random inputs"


def test_image_goes_to_the_input_that_can_hold_an_image() -> None:
    model = shared_model("packaged/silero_vad/silero_vad_16k_op15.onnx")
    with pytest.raises(InputError, match="no input takes an image"):
        run_image(model, shared_model("images/chelsea.png"))
