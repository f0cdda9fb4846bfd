"""Intermediates: a captured tensor is exactly what a bare session outputting it returns."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from onnxstudio.runner.feeds import request_feeds
from onnxstudio.runner.intermediates import capture, histogram, node_outputs, tensor_stats
from onnxstudio.runner.pipeline import ImageSource, RunRequest
from onnxstudio.runner.session import Session, SessionConfig
from tests.conftest import shared_model


def _bare(model: Path, value: str, feeds: dict[str, np.ndarray]) -> np.ndarray:
    proto = onnx.load(str(model))
    proto.graph.output.append(onnx.ValueInfoProto(name=value))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(proto.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    return sess.run([value], feeds)[0]


@pytest.mark.parametrize("model_path,image,value", [
    ("zoo/mnist/mnist.onnx", "images/digit_3.jpg", "ReLU32_Output_0"),
    ("zoo/onnx_light/light_squeezenet.onnx", "images/chelsea.png", "r10"),
])
def test_capture_equals_bare_session(model_path: str, image: str, value: str) -> None:
    model = shared_model(model_path)
    img = shared_model(image)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    request = RunRequest(model, images=[ImageSource(img.name, img)])
    got = capture(request, [value])
    _, feeds = request_feeds(request, Session(model, SessionConfig(optimization="disable")))
    expected = _bare(model, value, feeds)
    np.testing.assert_array_equal(got.values[value], expected)
    st = got.stats[value]
    assert st.shape == expected.shape and st.max == pytest.approx(float(expected.max()))
    assert hashlib.sha256(model.read_bytes()).hexdigest() == digest  # never written


def test_capture_all_respects_the_memory_cap() -> None:
    model = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    request = RunRequest(model, random=True)
    everything = capture(request)
    names = node_outputs(onnx.load(str(model)).graph)
    assert set(everything.values) == set(names) and not everything.skipped
    cap = 4 << 20
    capped = capture(request, cap_bytes=cap)
    assert capped.skipped and capped.warnings
    assert sum(v.nbytes for v in capped.values.values()) <= cap
    assert set(capped.values) | set(capped.skipped) == set(names)


def test_stats_and_histogram_ignore_non_finite_values() -> None:
    arr = np.array([0.0, 1.0, np.nan, np.inf, 3.0], dtype=np.float32)
    st = tensor_stats(arr)
    assert (st.nan, st.inf, st.zeros, st.min, st.max) == (1, 1, 1, 0.0, 3.0)
    counts, edges = histogram(arr, bins=3)
    assert counts.sum() == 3 and len(edges) == 4


def test_capturing_every_value_reads_the_graph_a_fixed_number_of_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The names to capture are checked against one set of the graph's values, not one
    built again for every name (quadratic: dag100k's Compare never finished)."""
    from onnx import TensorProto, helper

    from onnxstudio.runner import intermediates

    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"]) for i in range(60)]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("v60", TensorProto.FLOAT, [2])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    path = tmp_path / "chain.onnx"
    onnx.save(proto, str(path))
    reads = []

    def counted(graph: onnx.GraphProto) -> list[str]:
        reads.append(1)
        return node_outputs(graph)

    monkeypatch.setattr(intermediates, "node_outputs", counted)
    feeds = {"v0": np.array([-1.0, 2.0], dtype=np.float32)}
    got = intermediates.capture_feeds(path, proto, feeds, None,
                                      SessionConfig(optimization="disable"))
    assert len(got.values) == 60
    np.testing.assert_array_equal(got.values["v30"], [0.0, 2.0])
    assert len(reads) <= 3


def test_a_large_graphs_capture_infers_its_sizes_in_a_child_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """onnx's C++ shape inference holds the GIL for its whole run (0.5 s of dag100k's
    Compare, the window frozen meanwhile): above CHILD_INFERENCE_NODES it runs in a
    child, and the capture is the same."""
    from types import SimpleNamespace

    from onnx import TensorProto, helper

    from onnxstudio.runner import intermediates

    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"]) for i in range(30)]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("v30", TensorProto.FLOAT, ["n"])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    path = tmp_path / "chain.onnx"
    onnx.save(proto, str(path))
    in_process: list[object] = []
    monkeypatch.setattr(intermediates, "CHILD_INFERENCE_NODES", 10)
    monkeypatch.setattr(intermediates, "shape_inference", SimpleNamespace(
        infer_shapes=lambda model: in_process.append(model) or model))
    feeds = {"v0": np.array([-1.0, 2.0, -3.0], dtype=np.float32)}
    kept, skipped, types = intermediates.plan_capture(proto, feeds, ["v5", "v30"])
    assert in_process == []
    assert [d.dim_value for d in types["v5"].tensor_type.shape.dim] == [3]  # pinned, inferred
    assert kept == ["v5", "v30"] and skipped == []
    got = intermediates.capture_feeds(path, proto, feeds, ["v5"],
                                      SessionConfig(optimization="disable"))
    np.testing.assert_array_equal(got.values["v5"], [0.0, 2.0, 0.0])
