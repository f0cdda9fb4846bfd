"""Every way opening a file can fail gives one ModelLoadError naming the file and reason."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from google.protobuf.message import DecodeError
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.errors import ModelLoadError
from onnxstudio.model import load, load_model, pieces
from onnxstudio.model.load import read_model_proto
from tests.builders import make_model, save, tiny_mlp
from tests.conftest import ladder_model


def _error(path: Path) -> str:
    with pytest.raises(ModelLoadError) as info:
        load_model(path)
    message = str(info.value)
    assert message.startswith(f"{path.name}: "), message
    return message


def test_missing_file(tmp_path: Path) -> None:
    assert "file not found" in _error(tmp_path / "nope.onnx")


def test_directory(tmp_path: Path) -> None:
    folder = tmp_path / "folder.onnx"
    folder.mkdir()
    assert "folder" in _error(folder)


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    assert "empty" in _error(empty)


def test_not_a_protobuf(tmp_path: Path) -> None:
    junk = tmp_path / "photo.onnx"
    junk.write_bytes(b"\xff\xd8\xff\xe0JFIF" + bytes(range(256)) * 4)
    assert "not an ONNX file" in _error(junk)


def test_truncated(tmp_path: Path) -> None:
    data = tiny_mlp().SerializeToString()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) * 2 // 3])
    assert "truncated" in _error(cut)


def test_protobuf_but_not_a_model(tmp_path: Path) -> None:
    # A valid ModelProto header with no graph, as a half-written exporter leaves it.
    headless = onnx.ModelProto(ir_version=8, producer_name="exporter")
    pb = tmp_path / "headless.onnx"
    pb.write_bytes(headless.SerializeToString())
    assert "not an ONNX model" in _error(pb)


def test_other_protobuf_message(tmp_path: Path) -> None:
    tensor = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "t")
    pb = tmp_path / "tensor.pb"
    pb.write_bytes(tensor.SerializeToString())
    assert "not an ONNX" in _error(pb)


def _external_model(tmp_path: Path, location: str) -> Path:
    model = tiny_mlp()
    for init in model.graph.initializer:
        if init.name == "W1":
            init.data_location = TensorProto.EXTERNAL
            raw = init.raw_data or numpy_helper.to_array(init).tobytes()
            init.ClearField("raw_data")
            init.ClearField("float_data")
            for key, value in (("location", location), ("offset", "0"), ("length", str(len(raw)))):
                entry = init.external_data.add()
                entry.key, entry.value = key, value
    return save(model, tmp_path / "ext.onnx")


def test_missing_external_file(tmp_path: Path) -> None:
    path = _external_model(tmp_path, "weights.bin")
    message = _error(path)
    assert "weights.bin" in message and "missing" in message


def test_external_path_escaping_folder(tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 128)
    path = _external_model(inner, "../secret.bin")
    assert "outside the model's folder" in _error(path)


def test_external_data_is_not_read_but_counted(tmp_path: Path) -> None:
    model = tiny_mlp()
    onnx.save(model, str(tmp_path / "m.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="m.data", size_threshold=0)
    before = (tmp_path / "m.data").stat().st_mtime_ns
    loaded = load_model(tmp_path / "m.onnx")
    assert loaded.external_data
    assert loaded.parameters == 4 * 8 + 8 + 8 * 3
    assert loaded.weight_bytes == loaded.parameters * 4
    assert {i.external_location for i in loaded.graph.initializers.values()} == {"m.data"}
    assert (tmp_path / "m.data").stat().st_mtime_ns == before


def test_short_external_file(tmp_path: Path) -> None:
    path = _external_model(tmp_path, "weights.bin")
    (tmp_path / "weights.bin").write_bytes(b"\0" * 8)  # W1 needs 128 bytes
    assert "shorter" in _error(path)


def test_file_is_never_written(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "m.onnx")
    os.chmod(path, 0o444)
    stat = path.stat()
    load_model(path)
    assert path.stat().st_mtime_ns == stat.st_mtime_ns and path.stat().st_size == stat.st_size


def test_onnx_text_format(tmp_path: Path) -> None:
    text = tmp_path / "add.onnxtxt"
    text.write_text(
        '<ir_version: 10, opset_import: ["" : 21]>\n'
        "agraph (float[N] x, float[N] y) => (float[N] z) {\n  z = Add(x, y)\n}\n")
    model = load_model(text)
    assert [n.op_type for n in model.graph.nodes] == ["Add"]
    assert model.graph.inputs == ["x", "y"]


def test_bad_onnx_text(tmp_path: Path) -> None:
    text = tmp_path / "bad.onnxtxt"
    text.write_text("<ir_version: 10>\nagraph (float x) => (y) { y = }")
    assert "text format" in _error(text)


def test_shape_inference_failure_is_a_warning(tmp_path: Path) -> None:
    # Add of incompatible static shapes: inference fails, the model still opens.
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, 5])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)])
    model = load_model(save(make_model(graph), tmp_path / "bad_shapes.onnx"))
    assert len(model.graph.nodes) == 1
    assert any("shape inference failed" in w for w in model.warnings)


def test_a_model_parsed_in_pieces_is_the_same_model(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Large files are parsed a run of graph records at a time (pieces.py); small limits
    # send this small model down that path, with an invalid UTF-8 name in a later piece.
    monkeypatch.setattr(pieces, "MIN_PIECED_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 48)
    model = tiny_mlp()
    model.graph.node[-1].name = "LASTXNODE"
    data = model.SerializeToString().replace(b"LASTXNODE", b"LAST\xffNODE")
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    runs = [piece for piece in pieces.model_pieces(data) or [] if piece[0]]
    assert len(runs) > 2
    merged: list[int] = []

    def merge(*args: Any) -> None:
        merged.append(len(args[2]))
        pieces.merge_pieces(*args)

    monkeypatch.setattr(load, "merge_pieces", merge)
    with ThreadPoolExecutor(1) as worker:  # as the window reads: the main thread does not
        proto, _ = worker.submit(read_model_proto, path).result()
        model_read = worker.submit(load_model, path).result()
    assert merged == [len(pieces.model_pieces(data) or [])] * 2
    assert proto.graph.node[-1].name == "LAST\ufffdNODE"
    proto.graph.node[-1].name = "LASTXNODE"
    assert proto == model
    assert [n.name for n in model_read.graph.nodes][-1] == "LAST\ufffdNODE"


def test_a_large_real_model_parses_in_pieces_to_the_whole_parse() -> None:
    path = ladder_model("dag100k.onnx")
    data = path.read_bytes()
    split = pieces.model_pieces(data)
    assert split is not None and sum(in_graph for in_graph, _, _ in split) > 20
    whole = onnx.ModelProto()
    whole.ParseFromString(data)
    with ThreadPoolExecutor(1) as worker:
        assert worker.submit(read_model_proto, path).result()[0] == whole


def test_a_cut_inside_a_record_falls_back_to_the_whole_parse(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Cuts are guessed (pieces.py); one that misses a record boundary must make the
    # piece before it fail, and the model is then parsed whole: never a wrong model.
    monkeypatch.setattr(pieces, "MIN_PIECED_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 48)
    monkeypatch.setattr(pieces, "_likely_boundary", lambda data, pos, end, *_: pos + 3)
    model = tiny_mlp()
    path = save(model, tmp_path / "m.onnx")
    failed: list[bool] = []

    def merge(*args: Any) -> None:
        try:
            pieces.merge_pieces(*args)
        except DecodeError:
            failed.append(True)
            raise

    monkeypatch.setattr(load, "merge_pieces", merge)
    with ThreadPoolExecutor(1) as worker:
        proto, _ = worker.submit(read_model_proto, path).result()
    assert failed and proto == model
