"""`onnxstudio merge`: stages back into the model they were cut from; two models joined."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from onnxstudio.cli import main
from onnxstudio.runner.inputs import read_model_info
from onnxstudio.runner.synthetic import synthetic_feeds
from tests.builders import make_model, save, tiny_mlp
from tests.llm_builders import save_tiny_llm
from tests.test_split import skip_mlp


def _outputs(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


def test_merged_stages_equal_the_original_llm(tmp_path: Path, capsys) -> None:
    path = save_tiny_llm(tmp_path / "tiny", layers=4)
    assert main(["split", str(path), str(tmp_path / "stages"), "--stages", "3",
                 "--no-check"]) == 0
    assert main(["merge", str(tmp_path / "stages"), str(tmp_path / "merged.onnx")]) == 0
    assert "wrote" in capsys.readouterr().out
    merged = onnx.load(str(tmp_path / "merged.onnx"))
    original = onnx.load(str(path))
    assert [i.name for i in merged.graph.input] == [i.name for i in original.graph.input]
    assert [o.name for o in merged.graph.output] == [o.name for o in original.graph.output]
    assert len(merged.graph.node) == len(original.graph.node)  # carried copies dropped
    info = read_model_info(path)
    feeds = synthetic_feeds(info.inputs, {"sequence_length": 5}, hints=info.dim_hints)
    want, got = _outputs(path, feeds), _outputs(tmp_path / "merged.onnx", feeds)
    assert want.keys() == got.keys()
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_two_models_join_output_to_input(tmp_path: Path, capsys) -> None:
    a = save(tiny_mlp(), tmp_path / "a.onnx")  # x[batch,4] -> y[batch,3]
    w = helper.make_tensor("W", TensorProto.FLOAT, [3, 2], np.ones(6, np.float32))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["probs", "W"], ["z"])], "b",
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 2])], [w])
    b = save(make_model(graph), tmp_path / "b.onnx")
    assert main(["merge", str(a), str(b), str(tmp_path / "ab.onnx"),
                 "--connect", "y=probs"]) == 0
    feeds = {"x": np.ones((2, 4), np.float32)}
    got = _outputs(tmp_path / "ab.onnx", feeds)["z"]
    np.testing.assert_allclose(got, _outputs(a, feeds)["y"].sum(axis=1, keepdims=True)
                               .repeat(2, axis=1), rtol=1e-6)


def test_merge_refusals_are_one_line(tmp_path: Path, capsys) -> None:
    a = save(tiny_mlp(), tmp_path / "a.onnx")
    b = save(skip_mlp(), tmp_path / "b.onnx")
    cases = [
        ([str(tmp_path)], "no manifest.json"),
        ([str(a), str(b)], "needs --connect"),
        ([str(a), str(b), "--connect", "nope=x"], "has no output 'nope'"),
        ([str(a), str(b), "--connect", "y=nope"], "has no input 'nope'"),
    ]
    for extra, reason in cases:
        sources = [e for e in extra if not e.startswith("--")][:2] if "--connect" in extra \
            else extra
        rest = extra[len(sources):]
        assert main(["merge", *sources, str(tmp_path / "out.onnx"), *rest]) == 2
        err = capsys.readouterr().err
        assert reason in err and err.count("\n") == 1
    assert main(["merge", str(a), str(b), str(a), "--connect", "y=x"]) == 2
    assert "refusing to write over" in capsys.readouterr().err


def test_stages_with_external_weights_merge_file_to_file(tmp_path: Path, monkeypatch) -> None:
    import functools

    import onnxstudio.model.split_write as split_write
    from onnxstudio.model.cut import write_cut

    monkeypatch.setattr(split_write, "write_cut", functools.partial(write_cut, external=True))
    path = save_tiny_llm(tmp_path / "tiny", layers=2)
    assert main(["split", str(path), str(tmp_path / "stages"), "--stages", "2",
                 "--no-check"]) == 0
    assert (tmp_path / "stages" / "stage_1.onnx.data").exists()
    assert main(["merge", str(tmp_path / "stages"), str(tmp_path / "merged.onnx")]) == 0
    data = tmp_path / "merged.onnx.data"
    assert data.exists() and data.stat().st_mode == (tmp_path / "merged.onnx").stat().st_mode
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left
    info = read_model_info(path)
    feeds = synthetic_feeds(info.inputs, hints=info.dim_hints)
    want, got = _outputs(path, feeds), _outputs(tmp_path / "merged.onnx", feeds)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_file_merge_models_rebuilds_stages_and_opens_the_result(qtbot, tmp_path: Path) -> None:
    from tests.conftest import shown_window
    from tests.test_main_window import wait_open

    path = save_tiny_llm(tmp_path / "tiny", layers=2)
    assert main(["split", str(path), str(tmp_path / "stages"), "--stages", "2",
                 "--no-check"]) == 0
    window = shown_window(qtbot)
    dialog = window.merge_models()
    qtbot.addWidget(dialog)
    assert not dialog.merge_button.isEnabled()  # nothing chosen yet
    dialog.folder.setText(str(tmp_path / "stages"))
    dialog.out.setText(str(tmp_path / "whole.onnx"))
    assert dialog.merge_button.isEnabled()
    with qtbot.waitSignal(dialog.merged, timeout=30000):
        dialog.merge_button.click()
    assert "Wrote" in dialog.status.text()
    tab = window.current_tab()
    assert tab is not None and tab.path == tmp_path / "whole.onnx"
    wait_open(qtbot, tab)
    assert tab.model is not None and len(tab.model.graph.nodes) == len(
        onnx.load(str(path)).graph.node)
    dialog.close()
