"""Defaults from evidence, one rule per test, on real models: metadata, producer and era,
uint8 input, an output that is already a distribution, and the remembered user choice."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from onnxstudio.runner.choices import REMEMBERED, model_key
from onnxstudio.runner.evidence import gather
from onnxstudio.runner.inputs import read_model_info
from onnxstudio.runner.pipeline import ImageSource, Pipeline, RunRequest
from onnxstudio.runner.postprocess import top_k
from onnxstudio.runner.preprocess import PreprocessOptions, image_input, plan
from tests.builders import make_model, save
from tests.conftest import shared_model


def _plan(model: Path, options: PreprocessOptions | None = None):
    info = read_model_info(model)
    spec = image_input(info.inputs)
    assert spec is not None
    return plan(spec, info.metadata, options, evidence=gather(info, spec))


def test_metadata_rule_bgr_0_255_for_the_winml_style_transfer() -> None:
    p = _plan(shared_model("zoo/style_transfer/starry-night-fp16.onnx"))
    assert (p.preset, p.channels, p.dtype) == ("raw255", "bgr", "float16")
    assert any("Image.NominalPixelRange" in r for r in p.reasons)
    assert any("Image.BitmapPixelFormat=Bgr8" in r for r in p.reasons)


def test_caffe2_producer_rule_bgr_minus_caffe_mean_with_alternatives() -> None:
    model = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    p = _plan(model)
    assert (p.preset, p.channels) == ("caffe", "bgr")
    assert any("onnx-caffe2" in r and "guess" in r for r in p.reasons)
    info = read_model_info(model)
    ev = gather(info, image_input(info.inputs))
    assert not ev.strong and ev.alternatives == ("caffe", "bgr255", "imagenet")
    # the user's explicit choice beats the producer's convention
    assert _plan(model, PreprocessOptions(preset="imagenet")).preset == "imagenet"


def test_caffe2_side_by_side_presets_give_each_top1() -> None:
    model = shared_model("zoo/onnx_light/light_resnet50.onnx")
    image = shared_model("images/chelsea.png")
    request = RunRequest(model, images=[ImageSource(image.name, image)])
    tried = Pipeline().try_presets(request)
    assert [name for name, _ in tried] == ["caffe", "bgr255", "imagenet"]
    fed = [o.fed[0] for _, o in tried]
    assert fed[0].low < -100 and fed[1].low >= 0 and fed[2].high < 3  # really different inputs
    assert all(o.top1() is not None for _, o in tried)


def test_uint8_input_rule_raw_pixels_on_a_quantized_conv() -> None:
    p = _plan(shared_model("node/node/test_qlinearconv/model.onnx"),
              PreprocessOptions(preset="imagenet"))
    assert (p.preset, p.mean, p.std, p.divisor) == ("raw255", (0.0,), (1.0,), 1.0)
    assert any("uint8" in r for r in p.reasons)


def test_face_detector_family_rule_centred_128_stretched() -> None:
    p = _plan(shared_model("ortdata/examples/Ultraface.version-RFB-320.onnx"))
    assert (p.preset, p.resize, p.size) == ("centred128", "stretch", (240, 320))
    assert p.mean == (127.0, 127.0, 127.0) and p.std == (128.0, 128.0, 128.0)


def test_keras_era_rule_nhwc_when_the_shape_does_not_say(tmp_path: Path) -> None:
    # No Keras image model ships in ../shared, so one is built with keras2onnx's producer.
    x = helper.make_tensor_value_info("input_1", TensorProto.FLOAT, ["N", "H", "W", "C"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "H", "W", "C"])
    model = make_model(helper.make_graph([helper.make_node("Identity", ["input_1"], ["y"])],
                                         "g", [x], [y]), opset=13)
    model.producer_name, model.producer_version = "keras2onnx", "1.7.0"
    p = _plan(save(model, tmp_path / "keras.onnx"))
    assert p.layout == "nhwc" and p.preset == "symmetric"
    assert any("keras2onnx" in r for r in p.reasons if r.startswith("layout"))


def test_softmax_output_is_not_softmaxed_again() -> None:
    model = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    assert read_model_info(model).distributions == {"softmaxout_1"}
    # fp16 probabilities of 1000 classes that sum to 0.99: still not soft-maxed again
    probs = np.full(1000, 0.00099, np.float16)
    probs[7] = 0.0109
    entries, applied = top_k(probs, 1, None, probabilities=True)
    assert not applied and entries[0].index == 7 and abs(entries[0].score - 0.0109) < 1e-4
    image = shared_model("images/coffee.png")
    (out,) = Pipeline().execute(RunRequest(model, images=[ImageSource(image.name, image)]))
    assert not out.classification().softmax_applied


def test_log_softmax_output_is_turned_into_probabilities() -> None:
    model = shared_model("ortdata/java/testdata/cnn_mnist_pytorch.onnx")
    image = shared_model("images/digit_3.jpg")
    (out,) = Pipeline().execute(RunRequest(model, images=[ImageSource(image.name, image)]))
    view = out.classification()
    assert view.softmax_applied and view.top[0].index == 3 and view.top[0].score > 0.9


def test_the_remembered_choice_follows_the_content_not_the_name(tmp_path: Path) -> None:
    original = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    copy = tmp_path / "renamed.onnx"
    shutil.copyfile(original, copy)
    assert model_key(copy) == model_key(original)
    remembered = PreprocessOptions(preset="bgr255", resize="stretch", source=REMEMBERED)
    p = _plan(copy, remembered)
    assert (p.preset, p.channels, p.resize) == ("bgr255", "bgr", "stretch")
    assert any(REMEMBERED in r for r in p.reasons) and p.alternatives == ()
    other = onnx.load(str(original))
    other.doc_string = "changed"
    onnx.save(other, str(copy))
    assert model_key(copy) != model_key(original)
