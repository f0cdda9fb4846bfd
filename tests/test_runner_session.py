"""Session wrapper: refused models, cancel, benchmark, providers, .npy and random feeds."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from onnxstudio.errors import InputError, RunError
from onnxstudio.runner.inputs import load_npy, read_model_info
from onnxstudio.runner.session import (
    CPU,
    RunCancelled,
    Session,
    SessionConfig,
    available_providers,
)
from onnxstudio.runner.synthetic import synthetic_feeds
from tests.builders import save, tiny_mlp
from tests.conftest import shared_model
from tests.runner_models import refused_model, slow_model


def test_refused_model_gives_a_clear_message(tmp_path: Path) -> None:
    with pytest.raises(RunError) as err:
        Session(refused_model(tmp_path / "bogus.onnx"))
    msg = str(err.value)
    assert msg.startswith("bogus.onnx: onnxruntime cannot load this model")
    assert "FrobnicateTensor" in msg and "[ONNXRuntimeError]" not in msg


def test_refused_real_model(tmp_path: Path) -> None:
    path = shared_model(
        "ortdata/examples/pytorch_superresolution_with_pre_post_processing_op18.onnx")
    with pytest.raises(RunError, match=r"cannot load this model.*DecodeImage"):
        Session(path)


def test_unavailable_provider_and_bad_options(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    assert available_providers()[0] == CPU
    with pytest.raises(RunError, match="NoSuchExecutionProvider is not available"):
        Session(path, SessionConfig(provider="NoSuchExecutionProvider"))
    with pytest.raises(RunError, match="optimisation level"):
        Session(path, SessionConfig(optimization="ludicrous"))


def test_options_are_applied_and_results_match_a_bare_session(tmp_path: Path) -> None:
    import onnxruntime as ort

    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    s = Session(path, SessionConfig(optimization="basic", threads=1))
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    got = s.run({"x": x})
    bare = ort.InferenceSession(str(path), providers=[CPU]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got.outputs["y"], bare)
    assert got.latency_ms > 0
    bench = s.benchmark({"x": x}, runs=5)
    assert len(bench.times_ms) == 5 and bench.median_ms <= bench.p90_ms


def test_cancel_stops_a_running_model(tmp_path: Path) -> None:
    s = Session(slow_model(tmp_path / "slow.onnx"))
    feeds = synthetic_feeds(s.inputs)
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            s.run(feeds)
            outcome["result"] = "finished"
        except RunCancelled as exc:
            outcome["result"] = exc

    t = threading.Thread(target=work)
    t.start()
    while s._current is None and t.is_alive():  # wait until the run is under way
        time.sleep(0.001)
    s.cancel()
    t.join(60)
    assert isinstance(outcome["result"], RunCancelled)
    assert "slow.onnx: run cancelled" in str(outcome["result"])
    s.reset_cancel()  # the session stays usable
    small = {"x": np.zeros((1024, 1024), np.float32)}
    s.cancel()
    with pytest.raises(RunCancelled):
        s.run(small)


def test_npy_inputs_are_checked(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    spec = read_model_info(path).inputs[0]
    good = tmp_path / "good.npy"
    np.save(good, np.ones((3, 4), np.float64))
    arr = load_npy(good, spec)
    assert arr.dtype == np.float32 and arr.shape == (3, 4)
    bad = tmp_path / "bad.npy"
    np.save(bad, np.ones((3, 5), np.float32))
    with pytest.raises(InputError, match=r"bad\.npy: shape \[3, 5\] does not fit"):
        load_npy(bad, spec)
    junk = tmp_path / "junk.npy"
    junk.write_bytes(b"nope")
    with pytest.raises(InputError, match=r"junk\.npy: not a readable \.npy"):
        load_npy(junk, spec)


def test_random_inputs_use_chosen_sizes_for_symbolic_dims(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    specs = read_model_info(path).inputs
    assert synthetic_feeds(specs)["x"].shape == (1, 4)
    feeds = synthetic_feeds(specs, {"batch": 7})
    assert feeds["x"].shape == (7, 4) and feeds["x"].dtype == np.float32
    assert Session(path).run(feeds).outputs["y"].shape == (7, 3)
