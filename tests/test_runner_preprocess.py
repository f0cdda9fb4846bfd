"""Preprocessing: the presets' exact numbers and the metadata -> shape -> user decision order."""

from __future__ import annotations

import numpy as np
import pytest

from onnxstudio.errors import InputError
from onnxstudio.runner.inputs import TensorSpec
from onnxstudio.runner.preprocess import (
    PreprocessOptions,
    apply,
    plan,
    preprocess,
    resize_image,
)

X = np.arange(256, dtype=np.float64)
EXPECTED = {
    "imagenet": [(X / 255 - m) / s for m, s in zip((0.485, 0.456, 0.406), (0.229, 0.224, 0.225),
                                                   strict=True)],
    "caffe": [X - 103.939, X - 116.779, X - 123.68],  # B, G, R
    "raw255": [X, X, X],
    "unit": [X / 255] * 3,
    "symmetric": [X / 127.5 - 1] * 3,
}


def ramp() -> np.ndarray:
    """A 1x256 RGB image whose R, G, B all run 0..255 (so channel order shows in the values)."""
    px = np.arange(256, dtype=np.uint8)
    return np.stack([px, px, px], axis=-1)[None]


NCHW = TensorSpec("x", "tensor", "float32", (1, 3, 1, 256))


@pytest.mark.parametrize("preset", list(EXPECTED))
def test_presets_give_exactly_the_specified_numbers(preset: str) -> None:
    pre = preprocess(ramp(), NCHW, options=PreprocessOptions(preset=preset, resize="stretch"))
    assert pre.tensor.dtype == np.float32
    assert pre.tensor.shape == (1, 3, 1, 256)
    expected = np.array(EXPECTED[preset], dtype=np.float32)
    np.testing.assert_array_equal(pre.tensor[0, :, 0, :], expected)


def test_caffe_is_bgr_and_means_follow_bgr_order() -> None:
    rgb = np.zeros((1, 1, 3), np.uint8)
    rgb[0, 0] = (10, 20, 30)
    pre = preprocess(rgb, TensorSpec("x", "tensor", "float32", (1, 3, 1, 1)),
                     options=PreprocessOptions(preset="caffe"))
    np.testing.assert_array_equal(pre.tensor.ravel(), np.array(
        [30 - 103.939, 20 - 116.779, 10 - 123.68], np.float32))


def test_metadata_beats_user_choice() -> None:
    meta = {"Image.BitmapPixelFormat": "Bgr8", "Image.NominalPixelRange": "NominalRange_0_255"}
    p = plan(NCHW, meta, PreprocessOptions(preset="imagenet", channels="rgb"))
    assert (p.preset, p.channels) == ("raw255", "bgr")
    assert any("metadata" in r for r in p.reasons)
    assert plan(NCHW, {"Image.NominalPixelRange": "Normalized_1_1"}).preset == "symmetric"


def test_user_choice_fills_what_the_model_leaves_open() -> None:
    p = plan(TensorSpec("x", "tensor", "float32", ("n", 3, "h", "w")), {},
             PreprocessOptions(preset="unit", channels="bgr", size=(300, 200), resize="letterbox"))
    assert (p.preset, p.channels, p.size, p.resize, p.layout) == (
        "unit", "bgr", (300, 200), "letterbox", "nchw")


def test_shape_decides_layout_channels_and_size() -> None:
    nhwc = plan(TensorSpec("x", "tensor", "float32", (1, 64, 48, 3)), {},
                PreprocessOptions(layout="nchw", size=(10, 10)))
    assert (nhwc.layout, nhwc.size) == ("nhwc", (64, 48))
    gray = plan(TensorSpec("x", "tensor", "float32", (1, 1, 28, 28)), {},
                PreprocessOptions(channels="rgb"))
    assert gray.channels == "gray"
    symbolic = plan(TensorSpec("x", "tensor", "float32", (1, 3, "h", "w")))
    assert symbolic.size == (224, 224)
    denoted = plan(TensorSpec("x", "tensor", "float32", (1, 3, 3, 3),
                              ("DATA_BATCH", "DATA_FEATURE", "DATA_FEATURE", "DATA_CHANNEL")))
    assert denoted.layout == "nhwc"


def test_uint8_input_takes_raw_pixels_and_float16_is_cast() -> None:
    u8 = preprocess(ramp(), TensorSpec("x", "tensor", "uint8", (1, 1, 256, 3)),
                    options=PreprocessOptions(preset="imagenet", resize="stretch"))
    assert u8.tensor.dtype == np.uint8 and u8.plan.preset == "raw255"
    np.testing.assert_array_equal(u8.tensor[0, 0, :, 0], np.arange(256))
    f16 = preprocess(ramp(), TensorSpec("x", "tensor", "float16", (1, 3, 1, 256)),
                     options=PreprocessOptions(preset="unit", resize="stretch"))
    assert f16.tensor.dtype == np.float16
    np.testing.assert_array_equal(f16.tensor[0, 0, 0], (X / 255).astype(np.float16))


def test_grayscale_is_luminance() -> None:
    rgb = np.zeros((3, 1, 3), np.uint8)
    rgb[:, 0] = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    pre = preprocess(rgb, TensorSpec("x", "tensor", "float32", (1, 1, 3, 1)),
                     options=PreprocessOptions(preset="raw255", resize="stretch"))
    # ITU-R 601-2: 0.299 R + 0.587 G + 0.114 B
    np.testing.assert_array_equal(pre.tensor.ravel(), [76, 150, 29])


def test_resize_modes() -> None:
    img = np.zeros((100, 200, 3), np.uint8)
    img[:, :100] = 255  # left half white
    assert resize_image(img, (50, 50), "stretch").shape == (50, 50, 3)
    box = resize_image(img, (100, 100), "letterbox")
    assert box.shape == (100, 100, 3)
    assert tuple(box[5, 50]) == (114, 114, 114) and tuple(box[50, 10]) == (255, 255, 255)
    crop = resize_image(img, (224, 224), "crop")  # scaled to 256 high, then the centre
    assert crop.shape == (224, 224, 3)
    assert crop[:, :100].mean() > 250 and crop[:, 130:].mean() < 5


def test_user_mean_std_scale_override_the_preset() -> None:
    p = plan(NCHW, {}, PreprocessOptions(preset="imagenet", mean=(1, 2, 3), std=(2,), scale=1.0,
                                         resize="stretch"))
    pre = apply(p, ramp())
    np.testing.assert_array_equal(pre.tensor[0, 2, 0], ((X - 3) / 2).astype(np.float32))


def test_rejects_what_is_not_an_image_input() -> None:
    with pytest.raises(InputError, match="not image-shaped"):
        plan(TensorSpec("x", "tensor", "float32", (1, 10)))
    with pytest.raises(InputError, match="5 channels"):
        plan(TensorSpec("x", "tensor", "float32", (1, 5, 8, 8)))
    with pytest.raises(InputError, match="unknown preset"):
        plan(NCHW, {}, PreprocessOptions(preset="vgg"))


def test_gray_on_a_colour_model_repeats_luminance() -> None:
    rgb = np.zeros((1, 1, 3), np.uint8)
    rgb[0, 0] = (255, 0, 0)
    pre = preprocess(rgb, TensorSpec("x", "tensor", "float32", (1, 3, 1, 1)),
                     options=PreprocessOptions(preset="raw255", channels="gray"))
    assert pre.plan.channels == "gray"
    np.testing.assert_array_equal(pre.tensor.ravel(), [76, 76, 76])


def test_one_channel_input_wins_over_colour_metadata() -> None:
    p = plan(TensorSpec("x", "tensor", "float32", (1, 1, 8, 8)),
             {"Image.BitmapPixelFormat": "Rgb8"})
    assert (p.channels, p.n_channels) == ("gray", 1)
    assert apply(p, np.zeros((8, 8, 3), np.uint8)).tensor.shape == (1, 1, 8, 8)
