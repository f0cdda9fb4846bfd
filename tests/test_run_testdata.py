"""`run MODEL test_data_set_0`, a folder of sets, ``x.pb`` and ``inputs.npz``: inputs matched
to the model, a verdict per expected output, exit 1 on a failure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.cli import main
from tests.builders import make_model, save

RNG = np.random.default_rng(7)


def _sub_model(path: Path) -> Path:
    """d = x - y: feeding the inputs the wrong way round changes the answer."""
    graph = helper.make_graph(
        [helper.make_node("Sub", ["x", "y"], ["d"])], "sub",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("d", TensorProto.FLOAT, [2, 3])])
    return save(make_model(graph), path)


def _write(path: Path, array: np.ndarray, name: str = "") -> None:
    path.write_bytes(numpy_helper.from_array(array, name).SerializeToString())


def _set(folder: Path, x: np.ndarray, y: np.ndarray, d: np.ndarray | None,
         names: tuple[str, str] = ("", "")) -> Path:
    folder.mkdir(parents=True)
    _write(folder / "input_0.pb", x, names[0])
    _write(folder / "input_1.pb", y, names[1])
    if d is not None:
        _write(folder / "output_0.pb", d)
    return folder


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _xy() -> tuple[np.ndarray, np.ndarray]:
    return (RNG.standard_normal((2, 3)).astype(np.float32),
            RNG.standard_normal((2, 3)).astype(np.float32))


def test_a_matching_set_passes_with_max_delta_and_tolerance(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _sub_model(tmp_path / "model.onnx")
    x, y = _xy()
    folder = _set(tmp_path / "test_data_set_0", x, y, x - y)
    assert main(["run", str(model), str(folder), "--json"]) == 0
    data = _json_lines(capsys.readouterr().out)[-1]
    assert data["verdict"] == "pass"
    assert data["expected"] == [{"name": "d", "verdict": "pass", "max_abs": 0.0,
                                 "tolerance": "rtol 1e-3, atol 1e-7", "reason": None}]
    assert main(["run", str(model), str(folder)]) == 0
    text = capsys.readouterr().out
    assert "expected pass  d: max |Δ| 0 (rtol 1e-3, atol 1e-7)" in text
    assert "verdict pass: 1 output matches test_data_set_0" in text


def test_a_wrong_expected_output_fails_and_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _sub_model(tmp_path / "model.onnx")
    x, y = _xy()
    wrong = x - y
    wrong[1, 2] += 0.5
    folder = _set(tmp_path / "test_data_set_0", x, y, wrong)
    assert main(["run", str(model), str(folder), "--json"]) == 1
    data = _json_lines(capsys.readouterr().out)[-1]
    assert data["verdict"] == "fail"
    check = data["expected"][0]
    assert check["reason"] == "1 of 6 values beyond the tolerance"
    assert check["max_abs"] == pytest.approx(0.5, abs=1e-6)


def test_stored_names_win_over_file_order(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """input_0.pb holds a tensor named "y": it feeds y, not the first input."""
    model = _sub_model(tmp_path / "model.onnx")
    x, y = _xy()
    folder = _set(tmp_path / "test_data_set_0", y, x, x - y, names=("y", "x"))
    assert main(["run", str(model), str(folder), "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[-1]["verdict"] == "pass"


def test_a_folder_of_sets_runs_as_a_table(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    model = _sub_model(tmp_path / "model.onnx")
    for i in range(3):
        x, y = _xy()
        _set(tmp_path / f"test_data_set_{i}", x, y, x - y if i != 1 else x + y)
    assert main(["run", str(model), str(tmp_path), "--json"]) == 1
    rows = _json_lines(capsys.readouterr().out)
    assert [r.get("set") for r in rows[:3]] == [f"test_data_set_{i}" for i in range(3)]
    assert [r["verdict"] for r in rows[:3]] == ["pass", "fail", "pass"]
    assert rows[-1] == {"folder": str(tmp_path), "sets": 3, "passed": 2, "failed": 1,
                        "cannot_run": 0, "verdict": "fail"}
    main(["run", str(model), str(tmp_path)])
    assert "== 3 test sets: 2 pass, 1 fail, 0 cannot run" in capsys.readouterr().out


def test_npz_feeds_by_name_and_checks_outputs_it_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _sub_model(tmp_path / "model.onnx")
    x, y = _xy()
    np.savez(tmp_path / "named.npz", y=y, x=x, d=x - y)
    assert main(["run", str(model), str(tmp_path / "named.npz"), "--json"]) == 0
    data = _json_lines(capsys.readouterr().out)[-1]
    assert data["verdict"] == "pass" and data["input"] == "named.npz"
    np.savez(tmp_path / "bad.npz", x=x, y=y, d=x + y)
    assert main(["run", str(model), str(tmp_path / "bad.npz"), "--json"]) == 1
    np.savez(tmp_path / "unknown.npz", z=x)
    assert main(["run", str(model), str(tmp_path / "unknown.npz")]) == 2
    err = capsys.readouterr().err
    assert "unknown.npz: 'z' names no input or output of the model (inputs: x, y)" in err


def test_a_lone_pb_feeds_the_input_it_names(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["y"])], "neg",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = save(make_model(graph), tmp_path / "neg.onnx")
    _write(tmp_path / "x.pb", np.array([1.5, -2.0], np.float32))
    assert main(["run", str(model), str(tmp_path / "x.pb"), "--json"]) == 0
    data = _json_lines(capsys.readouterr().out)[-1]
    assert data["outputs"][0]["values"] == [-1.5, 2.0]
    assert data["verdict"] is None  # nothing expected: no verdict


def test_a_broken_pb_is_one_line_naming_the_file(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    model = _sub_model(tmp_path / "model.onnx")
    folder = tmp_path / "test_data_set_0"
    folder.mkdir()
    (folder / "input_0.pb").write_bytes(b"\xff\xff\xff not a tensor")
    _write(folder / "input_1.pb", np.zeros((2, 3), np.float32))
    assert main(["run", str(model), str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("onnxstudio: input_0.pb: not an onnx TensorProto")
    assert "\n" not in err and "Traceback" not in err


def test_sequence_test_data_is_read_as_sequence_protos(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sequence input and output, written as onnx's suites write them."""
    seq = onnx.TypeProto()
    seq.sequence_type.elem_type.tensor_type.elem_type = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("SequenceInsert", ["s", "t"], ["out"])], "seq",
        [helper.make_value_info("s", seq),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
        [helper.make_value_info("out", seq)])
    model = save(make_model(graph), tmp_path / "seq.onnx")
    folder = tmp_path / "test_data_set_0"
    folder.mkdir()
    a, b = np.ones(2, np.float32), np.arange(2, dtype=np.float32)
    (folder / "input_0.pb").write_bytes(numpy_helper.from_list([a]).SerializeToString())
    _write(folder / "input_1.pb", b)
    (folder / "output_0.pb").write_bytes(numpy_helper.from_list([a, b]).SerializeToString())
    assert main(["run", str(model), str(folder), "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[-1]["verdict"] == "pass"


def test_map_and_optional_protos_are_read_as_onnx_writes_them(tmp_path: Path) -> None:
    from onnxstudio.runner.inputs import TensorSpec
    from onnxstudio.runner.testdata import read_value

    mp = numpy_helper.from_dict({1: np.float32(0.25), 2: np.float32(0.75)}, "probs")
    (tmp_path / "output_0.pb").write_bytes(mp.SerializeToString())
    name, value = read_value(tmp_path / "output_0.pb", TensorSpec("probs", "map", None))
    assert name == "probs" and value == {1: np.float32(0.25), 2: np.float32(0.75)}
    empty = numpy_helper.from_optional(None, "maybe", dtype=onnx.OptionalProto.TENSOR)
    (tmp_path / "input_0.pb").write_bytes(empty.SerializeToString())
    assert read_value(tmp_path / "input_0.pb", TensorSpec("maybe", "optional", None)) == \
        ("maybe", None)


def test_onnxruntimes_older_set_naming_is_read_too(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """onnxruntime's own test data (e.g. its squeezenet set) names files
    test_data_0_input.pb / test_data_0_output.pb."""
    graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["y"])], "neg",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = save(make_model(graph), tmp_path / "neg.onnx")
    folder = tmp_path / "test_data_set_0"
    folder.mkdir()
    x = np.array([1.0, -2.0, 3.0], np.float32)
    _write(folder / "test_data_0_input.pb", x)
    _write(folder / "test_data_0_output.pb", -x)
    assert main(["run", str(model), str(folder), "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[-1]["verdict"] == "pass"
