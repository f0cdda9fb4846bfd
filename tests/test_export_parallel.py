"""The CLI's export infers shapes in a fork while it builds the graph, and loads
exactly the model one process loads (onnxstudio/concurrency/fork.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from onnxstudio.concurrency.fork import Forked, ForkFailed
from onnxstudio.model import load_model
from tests.builders import relu_chain, save, tiny_mlp


def test_forked_work_runs_in_another_process(forking: None) -> None:
    assert Forked(os.getpid).result() != os.getpid()


def test_forked_work_that_raises_has_no_result(forking: None) -> None:
    with pytest.raises(ForkFailed):
        Forked(lambda: 1 // 0).result()


def test_a_result_cut_short_is_no_result_and_delivered_forks_are_reaped(
        forking: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxstudio.concurrency import fork as forked

    done = Forked(lambda: "whole")
    assert done.result() == "whole"
    for _ in range(500):  # its exit, after the result, is reaped on a later call
        forked._reap()
        if not forked._EXITING:
            break
        time.sleep(0.01)
    assert not forked._EXITING

    def half(fd: int, data: bytes) -> None:  # the fork dies halfway through its result
        os.write(fd, data[:len(data) // 2])
        os._exit(0)

    monkeypatch.setattr(forked, "_write_all", half)
    with pytest.raises(ForkFailed):
        Forked(lambda: list(range(1000))).result()


def test_cancelled_forked_work_has_no_result() -> None:
    work = Forked(lambda: time.sleep(60))
    work.cancel()
    with pytest.raises(ForkFailed):
        work.result()


def _types(model) -> dict[str, object]:
    return {name: value.type for name, value in model.graph.values.items()}


@pytest.mark.parametrize("bad", [False, True])
def test_overlapped_load_is_the_same_model(forking: None, tmp_path: Path, bad: bool) -> None:
    """Inferred in a fork: the same types, and the same warnings in the same order."""
    path = save(relu_chain(30, bad=bad), tmp_path / "chain.onnx")
    alone, overlapped = load_model(path), load_model(path, overlap=True)
    assert _types(overlapped) == _types(alone)
    assert overlapped.graph.values["v7"].type.describe() == "float32[2×8]"
    assert overlapped.warnings == alone.warnings
    assert any("shape inference failed" in w for w in overlapped.warnings) == bad


@pytest.mark.parametrize("bad", [False, True])
def test_load_with_inference_started_from_the_file_is_the_same_model(
        forking: None, tmp_path: Path, bad: bool) -> None:
    """The CLI export starts the fork before it reads the model: the fork reads it."""
    from onnxstudio.model.infer_child import ForkedInference

    path = save(relu_chain(30, bad=bad), tmp_path / "chain.onnx")
    alone = load_model(path)
    early = load_model(path, inferring=ForkedInference(path))
    assert _types(early) == _types(alone) and early.warnings == alone.warnings
    assert early.graph.values["v7"].type.describe() == "float32[2×8]"


@pytest.mark.parametrize("early", [False, True])
def test_inference_that_crashes_its_fork_is_named_by_the_guard(forking: None, tmp_path: Path,
                                                               early: bool) -> None:
    """The fork infers unguarded: onnx's LabelEncoder inference segfaults on an input
    nothing defines, which ends the fork only; the model opens with the guard's reason."""
    from onnx import TensorProto, helper

    from onnxstudio.model.infer_child import ForkedInference
    from tests.builders import make_model

    node = helper.make_node("LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml",
                            keys_strings=["a"], values_int64s=[1], default_int64=0)
    graph = helper.make_graph([node], "dangling", [],
                              [helper.make_tensor_value_info("Y", TensorProto.INT64, [1])])
    path = save(make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                 helper.make_opsetid("ai.onnx.ml", 4)]),
                tmp_path / "m.onnx")
    model = load_model(path, inferring=ForkedInference(path)) if early else \
        load_model(path, overlap=True)
    assert any("input 'X' of node 'LabelEncoder' is produced by nothing" in w
               for w in model.warnings), model.warnings
    assert model.warnings == load_model(path).warnings


@pytest.mark.parametrize("early", [False, True])
def test_without_fork_the_overlapped_load_is_the_same_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, early: bool) -> None:
    """Where there is no fork (Windows), the same loaded model; inference started from
    the file wrote to a closed pipe there ("Bad file descriptor")."""
    from onnxstudio.model.infer_child import ForkedInference

    path = save(relu_chain(30, bad=True), tmp_path / "chain.onnx")
    alone = load_model(path)
    monkeypatch.delattr(os, "fork", raising=False)
    overlapped = load_model(path, inferring=ForkedInference(path)) if early else \
        load_model(path, overlap=True)
    assert _types(overlapped) == _types(alone) and overlapped.warnings == alone.warnings


def test_side_sources_move_beside_the_column(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """build_layout moves BERT's far-reaching attention mask beside the column."""
    from onnxstudio.layout import build, build_layout, default_state
    from onnxstudio.layout.serialize import layout_to_dict
    from tests.benchmarks import ladder

    model = load_model(save(ladder.bert(4), tmp_path / "bert4.onnx"))
    state = default_state(model.graph)
    one = layout_to_dict(build_layout(model, state))
    monkeypatch.setattr(build, "SIDE_SOURCES", False)
    assert layout_to_dict(build_layout(model, state)) != one  # the mask did move aside


def test_the_forks_byte_checks_count_only_for_the_file_this_process_read(forking: None,
        tmp_path: Path) -> None:
    """The inference fork reads the file first and answers the loader's byte checks
    (is every name UTF-8?); a file replaced since is checked again here."""
    import select

    from onnxstudio.model.infer_child import ForkedInference

    path = tmp_path / "m.onnx"
    model = tiny_mlp()
    save(model, path)
    model.graph.node[0].name = "NODEXNAME"
    broken = model.SerializeToString().replace(b"NODEXNAME", b"NODE\xffNAME")
    for replaced in (False, True):
        if not replaced:
            path.write_bytes(broken)
        inferring = ForkedInference(path)
        assert select.select([inferring._said], [], [], 10)[0]  # the fork has spoken
        if replaced:
            path.write_bytes(broken)  # what the fork checked was the clean file
        loaded = load_model(path, inferring=inferring)
        assert "NODE\ufffdNAME" in [n.name for n in loaded.graph.nodes], replaced
        save(model, path)
