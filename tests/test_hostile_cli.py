"""Issue 16, findings 1-9, 11, 12: every hostile input gives one clear line, exit code 2."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image

from onnxstudio.errors import InputError, describe_failure, user_message
from onnxstudio.runner import images
from onnxstudio.runner.inputs import TensorSpec
from onnxstudio.runner.synthetic import check_budget, synthetic_feeds
from tests.builders import save, tiny_mlp
from tests.conftest import REPO
from tests.hostile import deep_model, run_cli

# `export` in this process would otherwise make a bare QGuiApplication, which later
# widget tests in the same session cannot use.
pytestmark = pytest.mark.usefixtures("qapp")


def _one_line(result_err: str, *needles: str) -> None:
    lines = result_err.splitlines()
    assert len(lines) == 1, result_err
    assert lines[0].startswith("onnxstudio: ") and "internal error" not in lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]


def _raw_replace(model_bytes: bytes, old: bytes, new: bytes) -> bytes:
    assert len(old) == len(new) and old in model_bytes
    return model_bytes.replace(old, new)


def test_opset_2_pow_31_is_one_line_from_info_and_export(tmp_path: Path) -> None:
    model = tiny_mlp()
    model.opset_import[0].version = 2**31
    path = save(model, tmp_path / "m.onnx")
    for args in (["info", path], ["info", "--json", path], ["export", path, tmp_path / "o.svg"]):
        result = run_cli(*args)
        assert result.code == 2
        _one_line(result.err, "opset version 2147483648", "out of range")


def test_invalid_utf8_names_are_shown_with_replacement_characters(tmp_path: Path) -> None:
    model = tiny_mlp()
    model.graph.node[0].name = "NODEXNAME"
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "DIMXPARAM"
    data = _raw_replace(model.SerializeToString(), b"NODEXNAME", b"NODE\xffNAME")
    path = tmp_path / "m.onnx"
    path.write_bytes(_raw_replace(data, b"DIMXPARAM", b"DIM\xfe\xffARAM"))
    result = run_cli("info", "--json", path)
    assert result.code == 0, result.err
    info = json.loads(result.out)
    assert info["inputs"][0]["shape"][0] == "DIM\ufffd\ufffdARAM"
    out = tmp_path / "m.svg"
    result = run_cli("export", path, out)
    assert result.code == 0, result.err
    names = [g.get("data-name") for g in ElementTree.parse(out).getroot().iterfind(".//{*}g")]
    assert "NODE\ufffdNAME" in names


def test_control_characters_in_names_leave_svg_and_dot_parseable(tmp_path: Path) -> None:
    model = tiny_mlp()
    model.graph.node[0].name = "/layer1/Mat\x01Mul\x1b[31m"
    model.graph.node[2].output[0] = "h\x0b2"
    model.graph.node[3].input[0] = "h\x0b2"
    path = save(model, tmp_path / "m.onnx")
    svg, dot = tmp_path / "m.svg", tmp_path / "m.dot"
    assert run_cli("export", path, svg, "--expand-all").code == 0
    tree = ElementTree.parse(svg)  # raises on a control character
    text = " ".join(tree.getroot().itertext())
    assert "Mat␁Mul␛[31m" in text or any(
        "Mat␁Mul␛[31m" in (g.get("data-name") or "") for g in tree.getroot().iterfind(".//{*}g"))
    assert run_cli("export", path, dot).code == 0
    raw = dot.read_bytes()
    assert b"\x01" not in raw and b"\x1b" not in raw and b"\x0b" not in raw
    assert "␛".encode() in raw


def test_nesting_beyond_protobufs_limit_says_so(tmp_path: Path) -> None:
    path = tmp_path / "deep.onnx"
    path.write_bytes(deep_model(40))
    result = run_cli("info", path)
    assert result.code == 2
    _one_line(result.err, "nests too deeply")
    shallow = tmp_path / "shallow.onnx"
    shallow.write_bytes(deep_model(10))
    assert run_cli("info", "--json", shallow).code == 0


@pytest.mark.parametrize("dim", [2**40, 2**63 - 1])
def test_random_inputs_refuse_absurd_dims_naming_the_size(tmp_path: Path, dim: int) -> None:
    model = tiny_mlp()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = dim
    path = save(model, tmp_path / "m.onnx")
    result = run_cli("run", "--random", path)
    assert result.code == 2
    _one_line(result.err, f"float32[{dim}, 4]", "budget for random inputs")


def test_random_budget_counts_every_input_and_names_the_size() -> None:
    specs = [TensorSpec("a", "tensor", "float32", (256, 256)),
             TensorSpec("b", "tensor", "int64", (1024,))]
    assert set(synthetic_feeds(specs)) == {"a", "b"}
    check_budget(specs, {}, budget=256 * 256 * 4 + 8192)
    with pytest.raises(InputError, match=r"need 264\.0 KB .*'b' is int64\[1024\]"):
        check_budget(specs, {}, budget=256 * 256 * 4)


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "m.onnx")
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` that has already exited
    try:
        result = subprocess.run([sys.executable, "-m", "onnxstudio", "info", str(path)],
                                cwd=REPO, stdout=write_end, stderr=subprocess.PIPE,
                                text=True, timeout=120)
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert result.stderr == ""


def _png_header(width: int, height: int, depth: int, colour: int) -> bytes:
    """A PNG whose header promises a huge image (the pixel data is never reached)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def test_a_deep_image_beyond_the_memory_budget_is_refused_from_its_header(
        tmp_path: Path) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(_png_header(9400, 9400, 16, 0))  # the 16-bit grey
    assert path.stat().st_size < 200
    # Pillow 10.0 opens 16-bit grey PNGs as 32-bit "I", newer ones as "I;16": the budget
    # counts the mode Pillow will decode to
    with pytest.raises(InputError, match=r"9400×9400 (I;16 image needs 506|I image needs 1,011) "
                                         r"MB .* budget"):
        images.load_image(path)


def test_the_image_budget_counts_channels_and_bytes(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "photo.png"
    Image.fromarray(np.zeros((100, 100, 3), np.uint8)).save(path)
    assert images.load_image(path).shape == (100, 100, 3)
    monkeypatch.setattr(images, "MEMORY_BUDGET", 100 * 100 * 3 - 1)
    with pytest.raises(InputError, match=r"100×100 RGB image needs 0 MB"):
        images.load_image(path)


def test_sixteen_bit_greys_still_decode_to_rgb(tmp_path: Path) -> None:
    path = tmp_path / "grey16.png"
    Image.fromarray(np.array([[0, 65535], [32768, 1000]], np.uint16)).save(path)
    rgb = images.load_image(path)
    assert rgb.dtype == np.uint8 and rgb.shape == (2, 2, 3)
    assert rgb[:, :, 0].tolist() == [[0, 255], [128, 4]]


def test_export_refuses_a_symlink_to_a_device(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "m.onnx")
    link = tmp_path / "out.svg"
    link.symlink_to("/dev/null")
    result = run_cli("export", path, link)
    assert result.code == 2
    _one_line(result.err, "not a regular file")
    assert link.is_symlink() and os.readlink(link) == "/dev/null"


def test_the_one_mapping_of_leaked_exception_types() -> None:
    assert user_message(MemoryError()) is not None
    assert "nests too deeply" in (user_message(RecursionError()) or "")
    assert user_message(OSError(28, "No space left on device", "/x/out.png")) == \
        "out.png: No space left on device"
    assert user_message(ValueError("boom")) is None
    line = describe_failure(TypeError("bad\nthing \x1b[31m"))
    assert line == "internal error (TypeError: bad)"
    assert "\\x1b" in describe_failure(InputError("name \x1b[31m here"))


def test_a_dangling_input_skips_the_shape_inference_that_would_crash(tmp_path: Path) -> None:
    """onnx 1.23's LabelEncoder inference segfaults on an input nothing defines (the fuzz
    test found it); inference is skipped with a warning instead."""
    from onnx import TensorProto, helper

    from tests.builders import make_model

    node = helper.make_node("LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml",
                            keys_strings=["a"], values_int64s=[1], default_int64=0)
    graph = helper.make_graph([node], "dangling", [],
                              [helper.make_tensor_value_info("Y", TensorProto.INT64, [1])])
    model = make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                             helper.make_opsetid("ai.onnx.ml", 4)])
    path = save(model, tmp_path / "m.onnx")
    result = run_cli("info", "--json", path)
    assert result.code == 0, result.err
    warnings = json.loads(result.out)["warnings"]
    assert any("input 'X' of node 'LabelEncoder' is produced by nothing" in w for w in warnings)


def test_xml_specials_in_names_come_back_whole_from_the_svg(tmp_path: Path) -> None:
    """Names are written with XML's escapes (our own, see svg_surface): quotes, ampersands,
    angle brackets and a newline read back exactly as the model has them."""
    name = 'a&b <c> "d" \'e\'\nf'
    model = tiny_mlp()
    model.graph.node[0].name = name
    path = save(model, tmp_path / "m.onnx")
    svg = tmp_path / "m.svg"
    assert run_cli("export", path, svg).code == 0
    names = [g.get("data-name") for g in ElementTree.parse(svg).getroot().iterfind(".//{*}g")]
    assert name in names
