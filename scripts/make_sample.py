"""Regenerate the sample model `digits_cnn.onnx` and the sample images `digit_<k>.png`.

Trains a small CNN on scikit-learn's bundled 8x8 digits (no download) with a plain numpy
training loop, so the only extra package is scikit-learn; the graph is written with
`onnx.helper`, using exporter-style scoped node names so the app shows collapsible groups.

    python scripts/make_sample.py          # needs numpy, onnx, pillow, scikit-learn

Input convention (also written into the model's metadata): one grayscale image resized to
8x8, float32 pixel values 0..255, light digit on a dark background (as in the dataset),
shape [N, 1, 8, 8]. The model divides by 255 itself.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from PIL import Image

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "resources" / "sample"
SEED = 20240521
IMAGE_SIZE = 128  # the shipped PNGs: each dataset pixel becomes a 16x16 block
IR_VERSION = 10  # onnxruntime >= 1.18 accepts it; onnx's newest IR may be too new
OPSET = 17
CHANNELS = (16, 32)  # conv1, conv2 output channels
HIDDEN = 64

Params = dict[str, np.ndarray]


# ---------------------------------------------------------------- numpy layers


def conv3x3(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Same-padded 3x3 cross-correlation, exactly ONNX Conv with pads=1."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = sliding_window_view(xp, (3, 3), axis=(2, 3))  # N,C,H,W,3,3
    return np.einsum("nchwij,ocij->nohw", win, w, optimize=True) + b[None, :, None, None]


def conv3x3_backward(
    x: np.ndarray, w: np.ndarray, dout: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = sliding_window_view(xp, (3, 3), axis=(2, 3))
    dw = np.einsum("nchwij,nohw->ocij", win, dout, optimize=True)
    db = dout.sum(axis=(0, 2, 3))
    dp = np.pad(dout, ((0, 0), (0, 0), (1, 1), (1, 1)))
    dwin = sliding_window_view(dp, (3, 3), axis=(2, 3))
    dx = np.einsum("nohwij,ocij->nchw", dwin, w[:, :, ::-1, ::-1], optimize=True)
    return dx, dw, db


def maxpool2(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, c, h, w = x.shape
    blocks = x.reshape(n, c, h // 2, 2, w // 2, 2)
    out = blocks.max(axis=(3, 5))
    mask = blocks == out[:, :, :, None, :, None]
    mask = mask / mask.sum(axis=(3, 5), keepdims=True)  # ties share the gradient
    return out, mask


def maxpool2_backward(dout: np.ndarray, mask: np.ndarray) -> np.ndarray:
    n, c, h2, _, w2, _ = mask.shape
    return (mask * dout[:, :, :, None, :, None]).reshape(n, c, h2 * 2, w2 * 2)


def forward(p: Params, x255: np.ndarray, cache: dict | None = None) -> np.ndarray:
    """Logits for images with pixel values 0..255, the same computation as the ONNX graph."""
    x = x255 / 255.0
    z1 = conv3x3(x, p["conv1.w"], p["conv1.b"])
    a1 = np.maximum(z1, 0)
    p1, m1 = maxpool2(a1)  # 4x4
    z2 = conv3x3(p1, p["conv2.w"], p["conv2.b"])
    a2 = np.maximum(z2, 0)
    p2, m2 = maxpool2(a2)  # 2x2
    f = p2.reshape(len(x), -1)
    h = f @ p["fc1.w"].T + p["fc1.b"]
    ha = np.maximum(h, 0)
    logits = ha @ p["fc2.w"].T + p["fc2.b"]
    if cache is not None:
        cache.update(x=x, z1=z1, p1=p1, m1=m1, z2=z2, m2=m2, f=f, h=h, ha=ha)
    return logits


def backward(p: Params, c: dict, dlogits: np.ndarray) -> Params:
    g: Params = {}
    g["fc2.w"] = dlogits.T @ c["ha"]
    g["fc2.b"] = dlogits.sum(0)
    dh = (dlogits @ p["fc2.w"]) * (c["h"] > 0)
    g["fc1.w"] = dh.T @ c["f"]
    g["fc1.b"] = dh.sum(0)
    dp2 = (dh @ p["fc1.w"]).reshape(c["m2"].shape[0], CHANNELS[1], 2, 2)
    dz2 = maxpool2_backward(dp2, c["m2"]) * (c["z2"] > 0)
    dp1, g["conv2.w"], g["conv2.b"] = conv3x3_backward(c["p1"], p["conv2.w"], dz2)
    dz1 = maxpool2_backward(dp1, c["m1"]) * (c["z1"] > 0)
    _, g["conv1.w"], g["conv1.b"] = conv3x3_backward(c["x"], p["conv1.w"], dz1)
    return g


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def init_params(rng: np.random.Generator) -> Params:
    def he(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return rng.normal(0.0, np.sqrt(2.0 / fan_in), shape)

    c1, c2 = CHANNELS
    return {
        "conv1.w": he((c1, 1, 3, 3), 9), "conv1.b": np.zeros(c1),
        "conv2.w": he((c2, c1, 3, 3), 9 * c1), "conv2.b": np.zeros(c2),
        "fc1.w": he((HIDDEN, c2 * 4), c2 * 4), "fc1.b": np.zeros(HIDDEN),
        "fc2.w": he((10, HIDDEN), HIDDEN) * 0.5, "fc2.b": np.zeros(10),
    }


def augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random one-pixel shifts and slight blur: the app's resize of a user image is never exact."""
    out = np.empty_like(x)
    for i, img in enumerate(x):
        dy, dx = rng.integers(-1, 2, size=2)
        img = np.roll(img, (dy, dx), axis=(1, 2))
        if rng.random() < 0.3:
            k = np.pad(img, ((0, 0), (1, 1), (1, 1)), mode="edge")
            blur = sum(k[:, a:a + 8, b:b + 8] for a in range(3) for b in range(3)) / 9.0
            img = 0.6 * img + 0.4 * blur
        out[i] = img
    return out


def train(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, epochs: int) -> Params:
    """Adam on cross-entropy, minibatches of 32."""
    p = init_params(rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(v) for k, v in p.items()}
    lr, b1, b2, eps, wd = 3e-3, 0.9, 0.999, 1e-8, 1e-4
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        xa = augment(x, rng)
        loss_sum = 0.0
        for start in range(0, len(x), 32):
            idx = order[start:start + 32]
            cache: dict = {}
            logits = forward(p, xa[idx], cache)
            prob = softmax(logits)
            loss_sum += -np.log(prob[np.arange(len(idx)), y[idx]] + 1e-12).sum()
            d = prob
            d[np.arange(len(idx)), y[idx]] -= 1
            grads = backward(p, cache, d / len(idx))
            step += 1
            rate = lr * (0.5 * (1 + np.cos(np.pi * epoch / epochs)))
            for k in p:
                gk = grads[k] + wd * p[k]
                m[k] = b1 * m[k] + (1 - b1) * gk
                v[k] = b2 * v[k] + (1 - b2) * gk * gk
                mh = m[k] / (1 - b1**step)
                vh = v[k] / (1 - b2**step)
                p[k] -= rate * mh / (np.sqrt(vh) + eps)
        if epoch % 10 == 9 or epoch == epochs - 1:
            print(f"epoch {epoch + 1:3d}  loss {loss_sum / len(x):.4f}")
    return p


# ---------------------------------------------------------------- ONNX export


def build_model(p: Params, accuracy: float) -> onnx.ModelProto:
    """The trained network as an ONNX graph with exporter-style scoped node names."""
    c1, c2 = CHANNELS
    inits = [
        numpy_helper.from_array(np.array(255.0, np.float32), "preprocess.scale"),
        numpy_helper.from_array(p["conv1.w"].astype(np.float32), "features.conv1.weight"),
        numpy_helper.from_array(p["conv1.b"].astype(np.float32), "features.conv1.bias"),
        numpy_helper.from_array(p["conv2.w"].astype(np.float32), "features.conv2.weight"),
        numpy_helper.from_array(p["conv2.b"].astype(np.float32), "features.conv2.bias"),
        numpy_helper.from_array(p["fc1.w"].astype(np.float32), "classifier.fc1.weight"),
        numpy_helper.from_array(p["fc1.b"].astype(np.float32), "classifier.fc1.bias"),
        numpy_helper.from_array(p["fc2.w"].astype(np.float32), "classifier.fc2.weight"),
        numpy_helper.from_array(p["fc2.b"].astype(np.float32), "classifier.fc2.bias"),
    ]
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 1]}
    pool = {"kernel_shape": [2, 2], "strides": [2, 2]}
    n = helper.make_node
    nodes = [
        n("Div", ["image", "preprocess.scale"], ["/preprocess/Div_output_0"],
          name="/preprocess/Div"),
        n("Conv", ["/preprocess/Div_output_0", "features.conv1.weight", "features.conv1.bias"],
          ["/features/conv1/Conv_output_0"], name="/features/conv1/Conv", **conv),
        n("Relu", ["/features/conv1/Conv_output_0"], ["/features/relu1/Relu_output_0"],
          name="/features/relu1/Relu"),
        n("MaxPool", ["/features/relu1/Relu_output_0"], ["/features/pool1/MaxPool_output_0"],
          name="/features/pool1/MaxPool", **pool),
        n("Conv", ["/features/pool1/MaxPool_output_0", "features.conv2.weight",
                   "features.conv2.bias"],
          ["/features/conv2/Conv_output_0"], name="/features/conv2/Conv", **conv),
        n("Relu", ["/features/conv2/Conv_output_0"], ["/features/relu2/Relu_output_0"],
          name="/features/relu2/Relu"),
        n("MaxPool", ["/features/relu2/Relu_output_0"], ["/features/pool2/MaxPool_output_0"],
          name="/features/pool2/MaxPool", **pool),
        n("Flatten", ["/features/pool2/MaxPool_output_0"], ["/classifier/Flatten_output_0"],
          name="/classifier/Flatten", axis=1),
        n("Gemm", ["/classifier/Flatten_output_0", "classifier.fc1.weight",
                   "classifier.fc1.bias"],
          ["/classifier/fc1/Gemm_output_0"], name="/classifier/fc1/Gemm", transB=1),
        n("Relu", ["/classifier/fc1/Gemm_output_0"], ["/classifier/relu/Relu_output_0"],
          name="/classifier/relu/Relu"),
        n("Gemm", ["/classifier/relu/Relu_output_0", "classifier.fc2.weight",
                   "classifier.fc2.bias"],
          ["logits"], name="/classifier/fc2/Gemm", transB=1),
        n("Softmax", ["logits"], ["probabilities"], name="/Softmax", axis=1),
    ]
    image = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 8, 8])
    image.doc_string = "grayscale 8x8, pixel values 0..255, light digit on dark background"
    probs = helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 10])
    probs.doc_string = "probability of each digit 0..9"
    graph = helper.make_graph(nodes, "digits_cnn", [image], [probs], initializer=inits)
    graph.doc_string = f"conv({c1})-pool-conv({c2})-pool-fc({HIDDEN})-fc(10)-softmax"
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="onnxstudio-sample",
        producer_version="1.0",
        doc_string=(
            "Handwritten digit classifier (0-9), a small CNN trained by onnxstudio's "
            "scripts/make_sample.py on scikit-learn's 8x8 digits dataset "
            f"(held-out accuracy {accuracy:.1%}). Input: a grayscale image resized to 8x8, "
            "pixel values 0..255, light digit on a dark background."
        ),
    )
    model.ir_version = IR_VERSION
    model.model_version = 1
    model.domain = "io.github.onnxstudio"
    helper.set_model_props(model, {
        "labels": ",".join(str(k) for k in range(10)),
        "Image.BitmapPixelFormat": "Gray8",
        "Image.ColorSpaceGamma": "SRGB",
        "Image.NominalPixelRange": "NominalRange_0_255",
        "Image.Polarity": "light_on_dark",
        "accuracy": f"{accuracy:.4f}",
        "dataset": "sklearn.datasets.load_digits (UCI optical recognition of handwritten "
                   "digits), 25% held out",
        "license": "MIT",
    })
    onnx.checker.check_model(model, full_check=True)
    return model


def save_images(x_test: np.ndarray, y_test: np.ndarray, prob: np.ndarray, out: Path) -> None:
    """One confidently classified held-out digit of each class, upscaled smoothly for display."""
    for k in range(10):
        candidates = np.flatnonzero((y_test == k) & (prob.argmax(1) == k))
        best = candidates[np.argmax(prob[candidates, k])]
        pixels = np.clip(np.rint(x_test[best, 0]), 0, 255).astype(np.uint8)
        img = Image.fromarray(pixels).resize(
            (IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BICUBIC
        )
        img.save(out / f"digit_{k}.png", optimize=True)


def main() -> int:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SAMPLE_DIR, help="output folder")
    parser.add_argument("--epochs", type=int, default=60)
    args = parser.parse_args()

    digits = load_digits()
    x = (digits.images.astype(np.float64) * (255.0 / 16.0))[:, None]  # 0..16 -> 0..255
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y
    )
    rng = np.random.default_rng(SEED)
    params = train(x_train, y_train, rng, epochs=args.epochs)
    prob = softmax(forward(params, x_test))
    accuracy = float((prob.argmax(1) == y_test).mean())
    print(f"held-out accuracy {accuracy:.4f} on {len(y_test)} images")

    model = build_model(params, accuracy)
    # The exported graph must compute what was trained: compare with onnx's reference runtime.
    onnx_prob = ReferenceEvaluator(model).run(None, {"image": x_test.astype(np.float32)})[0]
    assert np.allclose(onnx_prob, prob, atol=1e-4), "ONNX graph disagrees with the numpy net"
    args.out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, args.out / "digits_cnn.onnx")
    save_images(x_test, y_test, prob, args.out)
    print(f"wrote {args.out / 'digits_cnn.onnx'} and digit_0..9.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
