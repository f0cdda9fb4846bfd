"""The shipped sample model is valid, runs in onnxruntime and classifies the shipped images."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from PIL import Image

from onnxstudio.resources import resource

SAMPLE = resource("sample")
MODEL = SAMPLE / "digits_cnn.onnx"


@pytest.fixture(scope="module")
def model() -> onnx.ModelProto:
    return onnx.load(MODEL)


@pytest.fixture(scope="module")
def session() -> ort.InferenceSession:
    return ort.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])


def preprocess(path, metadata: dict[str, str], size: tuple[int, int]) -> np.ndarray:
    """What the metadata promises: Gray8, values 0..255, resized to the input's H x W."""
    assert metadata["Image.BitmapPixelFormat"] == "Gray8"
    assert metadata["Image.NominalPixelRange"] == "NominalRange_0_255"
    with Image.open(path) as img:
        gray = img.convert("L").resize((size[1], size[0]), Image.Resampling.BILINEAR)
    return np.asarray(gray, dtype=np.float32)[None, None]


def test_model_passes_checker_and_is_loadable_by_onnxruntime(model: onnx.ModelProto) -> None:
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 10
    assert max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) <= 21
    assert model.producer_name == "onnxstudio-sample"
    assert model.doc_string


def test_model_is_a_real_cnn_with_scoped_names(model: onnx.ModelProto) -> None:
    ops = {n.op_type for n in model.graph.node}
    assert {"Conv", "Relu", "MaxPool", "Gemm", "Softmax"} <= ops
    names = [n.name for n in model.graph.node]
    assert "/features/conv1/Conv" in names
    assert sum(n.startswith("/features/") for n in names) >= 4
    assert sum(n.startswith("/classifier/") for n in names) >= 3


def test_metadata_names_the_labels(model: onnx.ModelProto) -> None:
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["labels"].split(",") == [str(k) for k in range(10)]


@pytest.mark.parametrize("digit", range(10))
def test_each_sample_image_is_classified_correctly(
    digit: int, model: onnx.ModelProto, session: ort.InferenceSession
) -> None:
    meta = {p.key: p.value for p in model.metadata_props}
    inp = session.get_inputs()[0]
    height, width = inp.shape[2], inp.shape[3]
    x = preprocess(SAMPLE / f"digit_{digit}.png", meta, (height, width))
    probs = session.run(None, {inp.name: x})[0][0]
    labels = meta["labels"].split(",")
    assert labels[int(probs.argmax())] == str(digit)
    assert probs.max() > 0.9


def test_sample_images_look_like_images() -> None:
    for digit in range(10):
        with Image.open(SAMPLE / f"digit_{digit}.png") as img:
            assert img.size == (128, 128)
            assert img.mode == "L"


@pytest.mark.parametrize("digit", range(10))
def test_runner_pipeline_classifies_each_sample(
    digit: int, session: ort.InferenceSession
) -> None:
    """The app's own path: metadata-driven preprocessing and metadata labels."""
    preprocess_mod = pytest.importorskip("onnxstudio.runner.preprocess")
    images = pytest.importorskip("onnxstudio.runner.images")
    inputs = pytest.importorskip("onnxstudio.runner.inputs")
    labels_mod = pytest.importorskip("onnxstudio.runner.labels")

    info = inputs.read_model_info(MODEL)
    spec = preprocess_mod.image_input(info.inputs)
    assert spec is not None
    pre = preprocess_mod.preprocess(
        images.load_image(SAMPLE / f"digit_{digit}.png"), spec, info.metadata
    )
    assert pre.plan.channels == "gray"
    assert pre.plan.preset == "raw255"
    probs = session.run(None, {spec.name: pre.tensor})[0][0]
    labels = labels_mod.resolve_labels(len(probs), MODEL, info.metadata)
    assert labels is not None and labels.source == "model metadata 'labels'"
    assert labels.name(int(probs.argmax())) == str(digit)
